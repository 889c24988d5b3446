// user-frontmatter: a user capability's frontmatter parses and matches the user-capability schema
// (name, description, whenToUse, uses, toolBindings; no id: the server assigns it).
import { compiledOnFirstUse, createAjv, OWN_SCHEMAS } from '../../ajv.js';
import { ruleDocsUrl, type Rule } from '../../rule.js';
import { BLANK_HINT, schemaProblems } from '../../schema-messages.js';
import { escapePointer, rangeForPath } from '../../yaml-source.js';
import userSchema from '../user-capability.schema.json' with { type: 'json' };

const userValidator = compiledOnFirstUse(() => createAjv({ strict: true, ...OWN_SCHEMAS }).compile(userSchema));
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
      // A YAML escape ("\0", "\uD800") puts in a value what the Markdown check cannot see: PostgreSQL
      // refuses NUL in text and JSON (the save would fail as if the store were down, and mark it so),
      // and either store keeps a lone surrogate as U+FFFD, so what is served differs from what was checked.
      for (const { path, what } of notText(frontmatter.data, '')) {
        report({
          capability,
          range: rangeForPath(frontmatter.ranges, path, frontmatter.range),
          messageId: 'problem',
          data: { message: `${fieldName(path)} contains ${what}; it must be text` },
        });
      }
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

/** In `u` mode a surrogate that is not half of a pair is matched as one code point. */
const LONE_SURROGATE = /\p{Cs}/u;

/** Every string in the frontmatter (values and keys) holding a NUL or a lone UTF-16 surrogate, by JSON pointer. */
function* notText(value: unknown, path: string): Generator<{ path: string; what: string }> {
  if (typeof value === 'string') {
    if (value.includes('\u0000')) yield { path, what: 'a NUL character' };
    else if (LONE_SURROGATE.test(value)) yield { path, what: 'a lone UTF-16 surrogate (not well-formed Unicode)' };
  } else if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) yield* notText(item, `${path}/${index}`);
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      const child = `${path}/${escapePointer(key)}`;
      yield* notText(key, child);
      yield* notText(item, child);
    }
  }
}

/** `name`, `whenToUse.0`, `toolBindings.1.step`: a field as the schema messages name it. */
function fieldName(path: string): string {
  return `\`${path.slice(1).replace(/\//g, '.').replace(/~1/g, '/').replace(/~0/g, '~')}\``;
}
