// One place that builds ajv instances: ajv is CommonJS, and its default export needs unwrapping
// under NodeNext module resolution.
import AjvModule from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { Options } from 'ajv';

type AjvClass = typeof AjvModule.default;
const Ajv: AjvClass = (AjvModule as unknown as { default?: AjvClass }).default ?? (AjvModule as unknown as AjvClass);
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule.default }).default ??
  addFormatsModule) as unknown as typeof addFormatsModule.default;

export type AjvInstance = InstanceType<AjvClass>;

export function createAjv(options: Options = {}): AjvInstance {
  // `verbose` puts the offending value on each error (`error.data`): schema-messages quotes it
  // ("not a list", "did you mean") and would otherwise print `undefined`.
  const ajv = new Ajv({ allErrors: true, strict: true, verbose: true, ...options });
  addFormats(ajv);
  return ajv;
}
