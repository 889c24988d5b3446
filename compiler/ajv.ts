// One place that builds ajv instances: ajv is CommonJS, and its default export needs unwrapping
// under NodeNext module resolution.
import AjvModule from 'ajv';
import Ajv2019Module from 'ajv/dist/2019.js';
import Ajv2020Module from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { Options, ValidateFunction } from 'ajv';

type AjvClass = typeof AjvModule.default;
function unwrap<T>(module: unknown): T {
  return (module as { default?: T }).default ?? (module as T);
}
const Ajv: AjvClass = unwrap<AjvClass>(AjvModule);
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule.default }).default ??
  addFormatsModule) as unknown as typeof addFormatsModule.default;

export type AjvInstance = InstanceType<AjvClass>;

/**
 * A validator compiled when it is first asked for. ajv compiles a schema into code, ~30-150 ms
 * each: a command pays it only for the schemas it uses, and not before its parse has started.
 */
export function compiledOnFirstUse(compile: () => ValidateFunction): () => ValidateFunction {
  let validate: ValidateFunction | undefined;
  return () => (validate ??= compile());
}

/**
 * For an instance that compiles only capreg's own schemas (compiler/schema/, the user capability
 * schema, rule options). ajv would check each schema against its meta-schema first, and compile
 * the meta-schema to do it: ~50 ms per instance, at the start of every command. These schemas are
 * fixed, so test/own-schemas.test.ts checks them instead; a schema an author writes
 * (frontmatter-schema's `inputSchema`, `outputSchema`) is still checked when it is read.
 */
export const OWN_SCHEMAS: Options = { validateSchema: false };

/**
 * The JSON Schema dialects ajv checks, by the `$schema` URI that names each. Draft-04 and draft-06
 * need meta-schemas or packages capreg does not ship, so they are not among them.
 */
export const JSON_SCHEMA_DIALECTS = {
  'draft-07': 'http://json-schema.org/draft-07/schema#',
  '2019-09': 'https://json-schema.org/draft/2019-09/schema',
  '2020-12': 'https://json-schema.org/draft/2020-12/schema',
} as const;
export type JsonSchemaDialect = keyof typeof JSON_SCHEMA_DIALECTS;

const AJV_CLASSES: Record<JsonSchemaDialect, AjvClass> = {
  'draft-07': Ajv,
  '2019-09': unwrap<AjvClass>(Ajv2019Module),
  '2020-12': unwrap<AjvClass>(Ajv2020Module),
};

/** The dialect a `$schema` URI names (a trailing `#` or none), or undefined for any other. */
export function dialectOf(uri: string): JsonSchemaDialect | undefined {
  const bare = uri.replace(/#$/, '');
  return (Object.keys(JSON_SCHEMA_DIALECTS) as JsonSchemaDialect[]).find((dialect) => JSON_SCHEMA_DIALECTS[dialect].replace(/#$/, '') === bare);
}

export function createAjv(options: Options = {}, dialect: JsonSchemaDialect = 'draft-07'): AjvInstance {
  // `verbose` puts the offending value on each error (`error.data`): schema-messages quotes it
  // ("not a list", "did you mean") and would otherwise print `undefined`.
  const ajv = new AJV_CLASSES[dialect]({ allErrors: true, strict: true, verbose: true, ...options });
  addFormats(ajv);
  return ajv;
}
