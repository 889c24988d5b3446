// frontmatter-schema: the frontmatter parses as YAML (no duplicate keys, no tabs, no alias bombs,
// no prototype keys) and matches the JSON Schema shipped in compiler/schema/capability.schema.json.
import { createAjv } from '../ajv.js';
import { schemaProblems } from '../schema-messages.js';
import type { Rule } from '../rule.js';
import capabilitySchema from '../schema/capability.schema.json' with { type: 'json' };
import { rangeForPath } from '../yaml-source.js';

const ajv = createAjv({ strict: true });
const validateFrontmatter = ajv.compile(capabilitySchema);
/** A separate, lenient instance to check that inputSchema/outputSchema are themselves valid JSON Schemas. */
const schemaChecker = createAjv({ strict: false, validateSchema: true });

const topLevelKeys = Object.keys(capabilitySchema.properties);
const constraintKeys = Object.keys(capabilitySchema.properties.constraints.items.properties);

const HINTS: Record<string, string> = {
  '/id': 'use lowercase letters and digits in words joined by single hyphens, e.g. "work-reporting"',
  '/protocol_version': 'use a semantic version MAJOR.MINOR.PATCH such as "1.2.0" (no ranges, no "latest", no "v" prefix)',
  '/protocol_updated': 'use an ISO date YYYY-MM-DD such as "2026-11-29"',
  '/evidenceTypes/*': 'use lowercase words joined by hyphens, e.g. "test-results"',
  '/retiredTools/*': 'use a tool name or a prefix glob ending in "*", e.g. "work_log_schedule_*"',
};

export const frontmatterSchema: Rule = {
  meta: {
    id: 'frontmatter-schema',
    description: 'The frontmatter parses as YAML and matches the capability JSON Schema.',
    defaultLevel: 'error',
    defaultOptions: {},
    messages: {
      yaml: '{{message}}',
      schema: '{{message}}',
      invalidJsonSchema: '`{{field}}` is not a valid JSON Schema: {{detail}}',
    },
  },
  check({ registry, report }) {
    for (const capability of registry.capabilities) {
      const { frontmatter } = capability.document;
      for (const problem of frontmatter.problems) {
        report({ capability, range: problem.range, messageId: 'yaml', data: { message: problem.message } });
      }
      if (!frontmatter.data) continue;
      if (!validateFrontmatter(frontmatter.data)) {
        const problems = schemaProblems(
          validateFrontmatter.errors,
          frontmatter.ranges,
          frontmatter.range,
          (path) => (path === '' ? topLevelKeys : /^\/constraints\/\d+$/.test(path) ? constraintKeys : []),
          HINTS,
        );
        for (const problem of problems) {
          report({ capability, range: problem.range, messageId: 'schema', data: { message: problem.message } });
        }
      }
      for (const field of ['inputSchema', 'outputSchema'] as const) {
        const value = frontmatter.data[field];
        if (typeof value !== 'object' || value === null || Array.isArray(value)) continue;
        let detail: string | undefined;
        try {
          if (!schemaChecker.validateSchema(value)) detail = schemaChecker.errorsText(schemaChecker.errors);
          else schemaChecker.compile(value);
        } catch (error) {
          detail = (error as Error).message;
        }
        if (detail !== undefined) {
          report({
            capability,
            range: rangeForPath(frontmatter.ranges, `/${field}`, frontmatter.range),
            messageId: 'invalidJsonSchema',
            data: { field, detail },
          });
        }
      }
    }
  },
};
