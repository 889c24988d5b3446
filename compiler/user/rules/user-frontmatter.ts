// user-frontmatter: a user capability's frontmatter parses and matches the user-capability schema
// (name, description, whenToUse, uses, toolBindings; no id: the server assigns it).
import { compiledOnFirstUse, createAjv } from '../../ajv.js';
import { ruleDocsUrl, type Rule } from '../../rule.js';
import { BLANK_HINT, schemaProblems } from '../../schema-messages.js';
import userSchema from '../user-capability.schema.json' with { type: 'json' };

const userValidator = compiledOnFirstUse(() => createAjv({ strict: true }).compile(userSchema));
const topLevelKeys = Object.keys(userSchema.properties);
const bindingKeys = Object.keys(userSchema.properties.toolBindings.items.properties);

/** Text of only spaces is as empty as "" (the same as a platform capability's). */
const BLANK_HINTS: Record<string, string> = { '/name': BLANK_HINT.name, '/description': BLANK_HINT.description };

export const userFrontmatter: Rule = {
  meta: {
    id: 'user-frontmatter',
    description: 'A user capability frontmatter parses and matches the user-capability schema.',
    defaultLevel: 'error',
    reads: 'document',
    docs: { url: ruleDocsUrl('user-frontmatter') },
    defaultOptions: {},
    messages: { problem: '{{message}}' },
  },
  check({ registry, report }) {
    for (const capability of registry.capabilities) {
      const { frontmatter } = capability.document;
      for (const problem of frontmatter.problems) report({ capability, range: problem.range, messageId: 'problem', data: { message: problem.message } });
      const validate = userValidator();
      if (!frontmatter.data || validate(frontmatter.data)) continue;
      const problems = schemaProblems(
        validate.errors,
        frontmatter.ranges,
        frontmatter.range,
        (path) => (path === '' ? topLevelKeys : /^\/toolBindings\/\d+$/.test(path) ? bindingKeys : []),
        BLANK_HINTS,
      );
      for (const problem of problems) report({ capability, range: problem.range, messageId: 'problem', data: { message: problem.message } });
    }
  },
};
