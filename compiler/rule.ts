// What a lint rule is (ESLint's shape): metadata with message templates and an options schema,
// and a `check` that reads the registry and reports. Rules never touch the disk.
import type { ParsedEvals } from './evals/file.js';
import type { Derived } from './derived.js';
import type { Fact } from './facts.js';
import type { ParsedToolsets } from './toolsets.js';
import type { CapabilityDocument, CapabilityFrontmatter, Range, Severity, SourceFile, Toolsets, YamlRanges } from './types.js';

/**
 * What a rule reads besides the capability it reports on. A user capability (compiled at run time
 * against the manifest) can be checked by every rule except `git` ones:
 * - `document`: its own document and the toolsets;
 * - `catalog`: also the catalog facts of the other capabilities (ids, triggers, links, toolsets);
 * - `bodies`: also the text of the other capabilities' protocols (a user compile gets fingerprints);
 * - `git`: what only a registry in Git has: file paths and folders, platform-only frontmatter,
 *   `toolsets.yaml` as written, the capabilities that link to this one.
 */
export type RuleReads = 'document' | 'catalog' | 'bodies' | 'git';

export interface RuleMeta<Options> {
  id: string;
  /** One sentence: what the rule checks. */
  description: string;
  defaultLevel: 'error' | 'warn';
  /** What the rule needs to see; decides where it can run (see {@link RuleReads}). */
  reads: RuleReads;
  /** Its documentation page, {@link ruleDocsUrl} of its id (SARIF's `helpUri`). */
  docs: { url: string };
  /** JSON Schema of the options object; options are validated when the config is loaded. */
  optionsSchema?: Record<string, unknown>;
  defaultOptions: Options;
  /** Message templates, `{{name}}` placeholders filled from `data`. */
  messages: Record<string, string>;
}

export interface Report {
  /** The file the problem is in; defaults to the capability's PROTOCOL.md. */
  file?: string;
  capability?: LintCapability;
  range: Range;
  messageId: string;
  data?: Record<string, string | number>;
  /**
   * Pins the severity whatever level the rule is set to (unless it is off): `warning` for a lesser
   * finding (a state entry nothing declares), `error` for a hard limit inside a rule that is a
   * warning by default (token-budget's `bodyError`, relaxed through its options, not its level).
   */
  severity?: Severity;
  related?: { file: string; range: Range; message: string };
  /** Facts this diagnostic is about: diagnostics that depend on them are dropped (compiler/facts.ts). */
  marks?: Fact[];
  /** Facts the conclusion rests on: when another diagnostic marked one of them broken, this one is dropped. */
  dependsOn?: Fact[];
}

export interface RuleContext<Options> {
  registry: LintRegistry;
  options: Options;
  /** A plain function (`this: void`): rules destructure it from the context. */
  report(this: void, report: Report): void;
}

export interface Rule<Options = Record<string, never>> {
  meta: RuleMeta<Options>;
  check(context: RuleContext<Options>): void;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a heterogeneous rule table
export type AnyRule = Rule<any>;

/** A capability as rules see it: its parsed document and the frontmatter fields that are well-typed. */
export interface LintCapability {
  document: CapabilityDocument;
  /** `id` from the frontmatter when it is a string, else the folder name. */
  id: string;
  /**
   * Frontmatter fields whose values have the right basic type, so rules can check the rest of a
   * capability even when one field is wrong (all problems in one run).
   */
  fm: Partial<CapabilityFrontmatter>;
  /** The file's text as read, for messages that quote the source (a YAML scalar as written, not as parsed). */
  source?: string;
}

export interface LintRegistry {
  /** In file order. */
  capabilities: LintCapability[];
  /** The first capability of each id. Under a session (`derived.keeps`) the same Map is updated in place by the next compile. */
  byId: Map<string, LintCapability>;
  toolsets: Toolsets;
  /** `capabilities/toolsets.yaml` */
  toolsetsFile: string;
  toolsetRanges: YamlRanges;
  /** Tool name -> ids of the toolsets that define it. */
  toolOwners: Map<string, string[]>;
  /** Every file path under `capabilities/`. */
  allPaths: Set<string>;
  /** toolsets.yaml as parsed, before the schema: for the `toolsets-schema` rule. */
  toolsetsSource: ParsedToolsets;
  /** Files that could not be read as text (too large, binary, not UTF-8, outside the root). */
  refusedFiles: SourceFile[];
  /**
   * Whether some toolsets file was not read: refused by the reader (registry-files; the file, or the
   * toolsets folder itself), past the folder's limit, or not parsed (toolsets-schema). The toolsets
   * it defines, their tools and the tools' states are unknown, not missing: no rule calls a toolset,
   * tool or state undefined or foreign while this holds, whether or not the rule that reports the
   * file is on.
   */
  toolsetsUnread: boolean;
  /** Capability folders without a PROTOCOL.md. */
  foldersWithoutProtocol: string[];
  /** `capabilities/<id>/evals.yaml` files that could be read, parsed (not served; see compiler/evals/file.ts). */
  evals: ParsedEvals[];
  /**
   * Facts a rule derives from one document (or block, or evals file), kept between the compiles of
   * `--watch` while that object is unchanged (compiler/derived.ts). The key names the rule and its
   * options; the context is everything else the fact reads.
   */
  derived: Derived;
}

export interface ResolvedRuleSetting<Options = unknown> {
  level: 'off' | 'warn' | 'error';
  options: Options;
}

export function severityFor(level: 'warn' | 'error', pinned: Severity | undefined): Severity {
  return pinned ?? (level === 'warn' ? 'warning' : 'error');
}

export function formatMessage(template: string, data: Record<string, string | number> = {}): string {
  return template.replace(/\{\{\s*(\w+)\s*\}\}/g, (match, name: string) => (name in data ? String(data[name]) : match));
}

/** The project's home (package.json `repository`); rule docs are linked from its main branch. */
export const REPOSITORY_URL = 'https://github.com/capreg/capreg';

/** Where a rule's documentation lives in the repository. */
export function ruleDocsPath(id: string): string {
  return `docs/rules/${id}.md`;
}

/** A rule's documentation page on the web (a rule's `meta.docs.url`; gate rules have no meta). */
export function ruleDocsUrl(id: string): string {
  return `${REPOSITORY_URL}/blob/main/${ruleDocsPath(id)}`;
}
