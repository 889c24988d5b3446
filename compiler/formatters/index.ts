// The built-in output formats, each loaded only when chosen: `sarif` describes every rule and so
// loads the whole compiler, which a rebuild answered from the build cache never needs.
import type { Formatter } from './types.js';

export const formatterLoaders: Readonly<Record<string, () => Promise<Formatter>>> = {
  stylish: async () => (await import('./stylish.js')).formatStylish,
  json: async () => (await import('./json.js')).formatJson,
  github: async () => (await import('./github.js')).formatGithub,
  sarif: async () => (await import('./sarif.js')).formatSarif,
};

export type { Formatter, LintReport } from './types.js';
export { countsOf } from './types.js';
