// capreg's own schemas are compiled without ajv's meta-schema check (compiler/ajv.ts, OWN_SCHEMAS):
// it is made here instead, once, for every one of them and for every rule's options schema. A
// schema with a misspelled keyword or a wrong type for one fails here, not at a user's start.
import { describe, expect, it } from 'vitest';
import { createAjv } from '../compiler/ajv.js';
import { rules } from '../compiler/rules/index.js';
import { USER_CAPABILITY_RULES } from '../compiler/user/compile-user.js';
import capabilitySchema from '../compiler/schema/capability.schema.json' with { type: 'json' };
import evalsSchema from '../compiler/schema/evals.schema.json' with { type: 'json' };
import manifestSchema from '../compiler/schema/manifest.schema.json' with { type: 'json' };
import toolsetsSchema from '../compiler/schema/toolsets.schema.json' with { type: 'json' };
import userSchema from '../compiler/user/user-capability.schema.json' with { type: 'json' };

/** ajv's meta-schema check of `schema`: its errors, or [] when it is a valid schema. */
function metaSchemaErrors(schema: object): string[] {
  // $data: rule options may relate two options (token-budget's bodyWarn <= bodyError).
  const ajv = createAjv({ strict: false, $data: true });
  return ajv.validateSchema(schema) ? [] : (ajv.errors ?? []).map((error) => `${error.instancePath} ${error.message ?? ''}`);
}

describe("capreg's own schemas", () => {
  const files: [string, object][] = [
    ['capability', capabilitySchema],
    ['evals', evalsSchema],
    ['manifest', manifestSchema],
    ['toolsets', toolsetsSchema],
    ['user capability', userSchema],
  ];
  it.each(files)('the %s schema is valid against its meta-schema', (_name, schema) => {
    expect(metaSchemaErrors(schema)).toEqual([]);
  });

  const options = [...new Set([...rules, ...USER_CAPABILITY_RULES])].filter((rule) => rule.meta.optionsSchema !== undefined);
  it('every rule with options has an options schema valid against its meta-schema', () => {
    expect(options.length).toBeGreaterThan(3);
    for (const rule of options)
      expect([rule.meta.id, metaSchemaErrors({ ...rule.meta.optionsSchema, additionalProperties: false })]).toEqual([rule.meta.id, []]);
  });

  it('catches a schema with a keyword of the wrong type', () => {
    expect(metaSchemaErrors({ type: 'object', properties: { a: { minimum: 'one' } } })).not.toEqual([]);
  });
});
