// The built-in output formats, one table: each loaded only when chosen (`sarif` describes every rule
// and so loads the whole compiler, which a rebuild answered from the build cache never needs), and
// each says which commands offer it: `markdown` summarizes the version gate, so only `capreg check`.
import type { Formatter } from './types.js';

export interface OutputFormat {
  /** True for a format that needs the gate's summary (`Report.gate`). */
  gateOnly: boolean;
  load: () => Promise<Formatter>;
}

export const FORMATS = {
  stylish: { gateOnly: false, load: async () => (await import('./stylish.js')).formatStylish },
  json: { gateOnly: false, load: async () => (await import('./json.js')).formatJson },
  github: { gateOnly: false, load: async () => (await import('./github.js')).formatGithub },
  sarif: { gateOnly: false, load: async () => (await import('./sarif.js')).formatSarif },
  markdown: { gateOnly: true, load: async () => (await import('./markdown.js')).formatMarkdown },
} as const satisfies Record<string, OutputFormat>;

export type FormatName = keyof typeof FORMATS;

/** The formats a command offers, in table order: every one for `capreg check`, the rest elsewhere. */
export function formatNames(options: { gate: boolean }): FormatName[] {
  return (Object.keys(FORMATS) as FormatName[]).filter((name) => options.gate || !FORMATS[name].gateOnly);
}

export type { Formatter, LintReport, Report } from './types.js';
export { countsOf } from './types.js';
