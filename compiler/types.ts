// Shared data shapes of the compiler pipeline: parse -> validate -> lint -> emit.
// Everything here is plain JSON-compatible data so that it can cross worker threads and caches.

/** 1-based source range. */
export interface Range {
  line: number;
  column: number;
  endLine: number;
  endColumn: number;
}

export type Severity = 'error' | 'warning';

export interface Diagnostic extends Range {
  /** Path relative to the registry root, `/` separators. */
  file: string;
  severity: Severity;
  ruleId: string;
  /** Which of the rule's message templates (`meta.messages`) the message was filled from. */
  messageId?: string;
  message: string;
  capabilityId?: string;
  /** Where the other half of the problem is ("first defined here"), when there is one. */
  related?: { file: string; line: number; column: number; message: string };
}

/** One file of the registry, held in memory. `content` is undefined when the file was refused (see `problem`). */
export interface SourceFile {
  /** Relative to the registry root, `/` separators. */
  path: string;
  content?: string;
  /** Why the file could not be read as text: too large, binary, not UTF-8, symlink outside the root. */
  problem?: string;
  /** Where in the file the problem is (the NUL byte, the first byte that is not UTF-8), when it has a place. */
  problemAt?: { line: number; column: number };
}

/** The whole registry as the pipeline sees it: text files plus the names of every other file. */
export interface RegistryInput {
  /** `capabilities/<id>/PROTOCOL.md` files and `capabilities/toolsets.yaml`. */
  files: SourceFile[];
  /** Every file path under `capabilities/` (for link resolution), `/` separators. */
  allPaths: string[];
  /** Capability folders (`capabilities/<folder>`) that have no PROTOCOL.md. */
  foldersWithoutProtocol: string[];
}

// ---------------------------------------------------------------------------------------------
// Parsed documents

/** A block of the protocol body that carries prose: a paragraph, list item, table row or heading. */
export interface TextBlock {
  kind: 'paragraph' | 'listItem' | 'tableRow' | 'heading';
  /** Plain text (inline code kept, Markdown syntax removed). */
  text: string;
  /** For table rows: the plain text of each cell. */
  cells?: string[];
  /** Text of the nearest heading above this block ('' before the first heading). */
  section: string;
  range: Range;
  /** Set on a catalog stand-in's block, which has no text: see `paragraphFingerprint`. */
  fingerprint?: string;
}

export interface LinkRef {
  kind: 'link' | 'image' | 'definition';
  url: string;
  text: string;
  range: Range;
}

export interface ToolsTableRow {
  tool: string;
  cells: string[];
  range: Range;
}

/** A table whose first header cell is "Tool" (or "Tools"), listing the tools a protocol uses. */
export interface ToolsTable {
  range: Range;
  rows: ToolsTableRow[];
}

/** A JSON-pointer-like path into the frontmatter (e.g. `/whenToUse/2`) mapped to a source range. */
export type YamlRanges = Record<string, { key?: Range; value: Range }>;

export interface FrontmatterProblem {
  code: 'missing' | 'yaml-syntax' | 'yaml-depth' | 'yaml-size' | 'non-json' | 'duplicate-key' | 'not-a-mapping' | 'alias-limit' | 'forbidden-key';
  message: string;
  range: Range;
  /** For `duplicate-key` (reported at the key's second place): where the key first is. */
  first?: Range;
}

export interface Frontmatter {
  present: boolean;
  /** Parsed value (a plain object when the YAML is a mapping), or undefined when it did not parse. */
  data: Record<string, unknown> | undefined;
  ranges: YamlRanges;
  /** Range of the whole frontmatter block (including `---` fences). */
  range: Range;
  problems: FrontmatterProblem[];
}

/** One capability's PROTOCOL.md after parsing: everything the rules need, no syntax tree. */
export interface CapabilityDocument {
  /** `capabilities/<folder>/PROTOCOL.md`. */
  file: string;
  folder: string;
  frontmatter: Frontmatter;
  /** The Markdown after the frontmatter block, exactly as written. */
  body: string;
  /** 1-based line on which `body` starts in the file. */
  bodyStartLine: number;
  blocks: TextBlock[];
  links: LinkRef[];
  /** Inline code spans and fenced code blocks, with their text. */
  code: { inline: boolean; value: string; range: Range }[];
  toolsTables: ToolsTable[];
  /** Parse-level problems in the body (e.g. an unclosed code fence). */
  bodyProblems: { message: string; range: Range }[];
  /** Number of BPE tokens of `body`. */
  bodyTokens: number;
  /** sha256 hex of the file content. */
  contentHash: string;
}

// ---------------------------------------------------------------------------------------------
// Toolsets

export type ToolAction = 'read' | 'write' | 'admin';

export interface ToolDefinition {
  action: ToolAction;
  description: string;
  states?: string[];
}

export interface ToolsetDefinition {
  description: string;
  tools: Record<string, ToolDefinition>;
}

export type Toolsets = Record<string, ToolsetDefinition>;

// ---------------------------------------------------------------------------------------------
// Frontmatter, validated

export interface Constraint {
  rationalization: string;
  rebuttal: string;
  severity: 'must-ignore' | 'warn' | 'block';
}

/** Frontmatter of a capability that passed the schema. */
export interface CapabilityFrontmatter {
  id: string;
  name: string;
  description: string;
  whenToUse: string[];
  requiredToolsets: string[];
  optionalToolsets?: string[];
  protocol_version: string;
  protocol_updated: string;
  states?: string[];
  retiredTools?: string[];
  lifecyclePhase?: 'define' | 'plan' | 'build' | 'verify' | 'review' | 'ship';
  tags?: string[];
  inputSchema?: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  evidenceTypes?: string[];
  constraints?: Constraint[];
  scopeConstraints?: string[];
  metadata?: Record<string, string>;
}

// ---------------------------------------------------------------------------------------------
// Manifest (SPEC §4). Field names are part of the contract.

export const MANIFEST_SCHEMA_VERSION = 1;

export interface ManifestCapability {
  id: string;
  name: string;
  description: string;
  whenToUse: string[];
  requiredToolsets: string[];
  optionalToolsets: string[];
  protocolVersion: string;
  protocolUpdated: string;
  /** sha256:<hex> of this capability's canonical content. */
  digest: string;
  /** Capability ids this protocol links to with `capability:` links, sorted. */
  references: string[];
  states?: string[];
  retiredTools?: string[];
  lifecyclePhase?: string;
  tags?: string[];
  inputSchema?: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  evidenceTypes?: string[];
  constraints?: Constraint[];
  scopeConstraints?: string[];
  metadata?: Record<string, string>;
  /** The Markdown served to agents. */
  protocol: string;
  /**
   * `[fingerprint, line]` of each paragraph and list item that `duplicate-content` compares, so a
   * user capability can be checked against it without the text. Not served; not in `digest`.
   */
  paragraphs?: [string, number][];
}

export interface Manifest {
  schemaVersion: number;
  /** Version of capreg that wrote it. */
  generator: string;
  revision: string;
  source: { commit: string | null; dirty: boolean } | null;
  /** ISO time from SOURCE_DATE_EPOCH when set; absent otherwise (builds are reproducible). */
  builtAt?: string;
  toolsets: Toolsets;
  capabilities: ManifestCapability[];
  /**
   * The registry's resolved settings (capreg.config.yaml) of every rule a user capability is
   * checked with, by rule id, so saves follow the registry's levels, markers and budgets.
   */
  rules?: Record<string, ManifestRuleSetting>;
  integrity: string;
}

export interface ManifestRuleSetting {
  level: 'off' | 'warn' | 'error';
  options: unknown;
}
