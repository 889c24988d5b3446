import { formatGithub } from './github.js';
import { formatJson } from './json.js';
import { formatSarif } from './sarif.js';
import { formatStylish } from './stylish.js';
import type { Formatter } from './types.js';

export const formatters: Readonly<Record<string, Formatter>> = {
  stylish: formatStylish,
  json: formatJson,
  github: formatGithub,
  sarif: formatSarif,
};

export type { Formatter, LintReport } from './types.js';
export { countsOf } from './types.js';
