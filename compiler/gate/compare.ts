// The version gate's core (SPEC §5): match the capabilities of the base and the new tree by folder,
// classify each (unchanged, changed, added, removed), work out the bump a change needs and judge the
// bump it got. Pure: parsed documents in, changes and diagnostics out; Git and the disk are the CLI's.
import { canonicalJson, sha256Hex } from '../canonical.js';
import { findNames, NameIndex } from '../mentions.js';
import { FILE_START } from '../positions.js';
import { schemaPropertyOrder } from '../render.js';
import { formatMessage } from '../rule.js';
import type { CapabilityDocument, Diagnostic, Range, Toolsets } from '../types.js';
import { capabilityToolsetReasons, requiredBump, sortReasons, toolsetChanges, toolsetsUsed, type BumpReason, type RequiredBump } from './required-bump.js';
import { BUMP_ORDER, bumpVersion, formatVersion, isIsoDate, parseVersion, versionMove, type BumpLevel, type VersionMove } from './semver.js';
import { byKey } from '../order.js';

export type ChangeKind = 'unchanged' | 'changed' | 'added' | 'removed';

/** `breaking`: reported as a breaking change (a removed capability), a warning rather than a failure. */
export type Verdict = 'pass' | 'fail' | 'breaking';

export interface VersionFields {
  /** `protocol_version` as written (stringified when YAML made it a number), undefined when absent. */
  version?: string;
  updated?: string;
}

export interface CapabilityChange {
  /** The capability's folder name: how the two trees are matched. */
  id: string;
  kind: ChangeKind;
  /** The PROTOCOL.md in the new tree (in the base tree for a removed capability). */
  file: string;
  before?: VersionFields;
  after?: VersionFields;
  /** For changed capabilities: what the change needs. */
  required: RequiredBump;
  /** How `protocol_version` moved; `invalid` when either side is not MAJOR.MINOR.PATCH. */
  move?: VersionMove | 'invalid';
  verdict: Verdict;
  /** Why the verdict is not `pass`, one sentence each (the diagnostics' messages). */
  problems: string[];
  /** A removed folder whose protocol reappears under another folder (same name or same body). */
  renamedTo?: string;
  renamedFrom?: string;
  /** The file's bytes changed but what is served did not (line endings, YAML layout, comments). */
  servedUnchanged?: boolean;
  /** The gate could not judge it (see `problems`): a failure. */
  notCompared?: boolean;
}

export interface GateResult {
  /** One entry per capability folder of either tree, sorted by id. */
  changes: CapabilityChange[];
  diagnostics: Diagnostic[];
}

export const GATE_RULES = {
  versionBump: 'version-bump',
  versionDate: 'version-date',
  capabilityRemoved: 'capability-removed',
  routingMoved: 'routing-moved',
} as const;

/** One line per gate rule id, for formatters that describe rules (SARIF); docs in docs/rules/<id>.md. */
export const GATE_RULE_DESCRIPTIONS: Record<string, string> = {
  [GATE_RULES.versionBump]: 'a changed capability raises protocol_version by at least the level the change needs',
  [GATE_RULES.versionDate]: 'protocol_updated is a real date that changes with protocol_version and never moves backwards',
  [GATE_RULES.capabilityRemoved]: 'a capability that existed at the base ref was removed or renamed (a breaking change)',
  [GATE_RULES.routingMoved]: 'a shouldMatch request of the evals that went first to its capability at the base ref still does',
};

export const GATE_MESSAGES = {
  notBumped: 'needs {{level}}: {{reasons}}; protocol_version is still {{from}} (expected {{atLeast}})',
  tooSmall: 'needs {{level}}: {{reasons}}; got {{move}} {{from}} → {{to}} (expected {{atLeast}})',
  down: 'protocol_version went down from {{from}} to {{to}}; a version only increases (expected {{atLeast}})',
  invalid: 'protocol_version "{{value}}" is not a valid version: expected MAJOR.MINOR.PATCH, e.g. {{expected}}',
  missing: 'protocol_version is missing: expected MAJOR.MINOR.PATCH, e.g. {{expected}}',
  dateUnchanged: 'protocol_updated is still {{date}} though protocol_version changed {{from}} → {{to}}; set it to the date of this change (YYYY-MM-DD)',
  dateForgotten:
    'protocol_updated is still {{date}} though the capability changed ({{reasons}}); set it to the date of this change (YYYY-MM-DD) as you bump protocol_version',
  dateMissing: 'protocol_updated is missing: expected the date of this change as YYYY-MM-DD',
  dateInvalid: 'protocol_updated "{{value}}" is not a date: expected the date of this change as YYYY-MM-DD',
  dateBackwards: 'protocol_updated moved backwards from {{from}} to {{to}}; it is the date of the latest change and only moves forward',
  removed: 'capability `{{id}}` was removed: agents and user capabilities that load it by id will no longer find it (a breaking change)',
  renamed:
    'capability folder `{{id}}` was renamed to `{{to}}`: agents and user capabilities that load `{{id}}` by id will no longer find it (a breaking change)',
  routingMoved:
    'request "{{request}}" went first to `{{id}}` at {{against}} and now goes first to {{now}}; make the trigger or description that drew it away more specific, or move the request to the evals of the capability that should answer it',
  routingTooMany:
    'routing not compared: the evals of both trees hold {{count}} requests, over the limit of {{limit}} the gate searches twice each; run `capreg eval` on both sides instead, or keep fewer requests',
} as const;

function versionFields(document: CapabilityDocument): VersionFields {
  const data = document.frontmatter.data ?? {};
  const text = (value: unknown): string | undefined => {
    if (value === undefined || value === null) return undefined;
    return typeof value === 'string' ? value : canonicalJson(value);
  };
  const fields: VersionFields = {};
  const version = text(data.protocol_version);
  const updated = text(data.protocol_updated);
  if (version !== undefined) fields.version = version;
  if (updated !== undefined) fields.updated = updated;
  return fields;
}

/** Where gate diagnostics point: the `protocol_version` line of the changed file (SPEC §5). */
export function versionRange(document: CapabilityDocument): Range {
  const ranges = document.frontmatter.ranges['/protocol_version'];
  if (!ranges) {
    // No protocol_version key: point at the opening `---` of the frontmatter.
    const { range, present } = document.frontmatter;
    return present ? { line: range.line, column: range.column, endLine: range.line, endColumn: range.column + 3 } : FILE_START;
  }
  const start = ranges.key ?? ranges.value;
  return { line: start.line, column: start.column, endLine: ranges.value.endLine, endColumn: ranges.value.endColumn };
}

/** The content that is served, minus the version fields: equal means no bump is needed. */
function servedContent(document: CapabilityDocument): string {
  const { protocol_version: _version, protocol_updated: _updated, ...rest } = document.frontmatter.data ?? {};
  return canonicalJson({
    frontmatter: document.frontmatter.data === undefined ? null : rest,
    body: document.body,
    // Canonical JSON sorts keys; the served protocol lists a schema's properties as written.
    propertyOrder: [schemaPropertyOrder(rest.inputSchema), schemaPropertyOrder(rest.outputSchema)],
  });
}

interface Problem {
  ruleId: string;
  message: string;
}

function judgeVersions(before: VersionFields, after: VersionFields, required: RequiredBump): { move: CapabilityChange['move']; problems: Problem[] } {
  const problems: Problem[] = [];
  const bump = (ruleId: string, template: string, data: Record<string, string>): void => {
    problems.push({ ruleId, message: formatMessage(template, data) });
  };
  const from = before.version !== undefined ? parseVersion(before.version) : undefined;
  const to = after.version !== undefined ? parseVersion(after.version) : undefined;
  const neededLevel: BumpLevel = required.level === 'none' ? 'patch' : required.level;
  const next = from ? bumpVersion(from, neededLevel) : undefined;
  // An example of a valid version, and the least the change needs: none fits when the base's major
  // part is already at its 15 digits (MAX.1.0 is above MAX.0.0, but not a major bump of it).
  const expected = !from ? '1.0.0' : formatVersion(next ?? from);
  const atLeast = !from || next ? `${expected} or higher` : `a ${neededLevel} bump of ${formatVersion(from)}, and none fits in 15 digits per part`;
  const decisive = required.reasons
    .filter((reason) => reason.level === required.level)
    .map((reason) => reason.text)
    .join('; ');

  let move: CapabilityChange['move'];
  if (after.version === undefined) {
    bump(GATE_RULES.versionBump, GATE_MESSAGES.missing, { expected });
  } else if (!to) {
    bump(GATE_RULES.versionBump, GATE_MESSAGES.invalid, { value: after.version, expected });
    move = 'invalid';
  } else if (!from) {
    move = 'invalid'; // the base was not valid: nothing to compare against, the new version stands
  } else {
    move = versionMove(from, to);
    const data = { level: required.level, reasons: decisive, from: formatVersion(from), to: formatVersion(to), atLeast, move };
    if (move === 'down') bump(GATE_RULES.versionBump, GATE_MESSAGES.down, data);
    else if (required.level !== 'none' && BUMP_ORDER[move] < BUMP_ORDER[required.level]) {
      bump(GATE_RULES.versionBump, move === 'none' ? GATE_MESSAGES.notBumped : GATE_MESSAGES.tooSmall, data);
    }
  }

  if (after.updated === undefined) {
    bump(GATE_RULES.versionDate, GATE_MESSAGES.dateMissing, {});
  } else if (!isIsoDate(after.updated)) {
    bump(GATE_RULES.versionDate, GATE_MESSAGES.dateInvalid, { value: after.updated });
  } else if (before.updated !== undefined && isIsoDate(before.updated)) {
    const [was, is] = [before.updated, after.updated];
    if (is < was) bump(GATE_RULES.versionDate, GATE_MESSAGES.dateBackwards, { from: was, to: is });
    else if (is === was && move !== undefined && move !== 'none' && move !== 'invalid' && move !== 'down') {
      bump(GATE_RULES.versionDate, GATE_MESSAGES.dateUnchanged, { date: is, from: before.version!, to: after.version! });
    } else if (is === was && move === 'none' && required.level !== 'none') {
      // Both version fields forgotten: the date is a fix of its own, said now rather than after the bump.
      bump(GATE_RULES.versionDate, GATE_MESSAGES.dateForgotten, { date: is, reasons: decisive });
    }
  }
  return { move, problems };
}

function nameOf(document: CapabilityDocument): string | undefined {
  const name = document.frontmatter.data?.name;
  return typeof name === 'string' ? name : undefined;
}

/**
 * Pair removed folders with added ones that carry the same protocol (same body, or same name): each
 * removed folder, in order, takes the first added folder not yet taken. The added folders are looked
 * up by a digest of the body and of the name: comparing every removed body with every added one made
 * 4,000 renamed folders of 3 KB take 9 s, and a map keyed by the text itself is no better for texts
 * over 16 KiB, which V8 hashes by their length alone (4,000 of 30 KB: 190 s either way).
 */
function findRenames(removed: CapabilityDocument[], added: CapabilityDocument[]): Map<string, string> {
  const renames = new Map<string, string>();
  const taken = new Set<string>();
  // Bodies first: a body match is stronger evidence than a name match.
  for (const textOf of [(document: CapabilityDocument): string => document.body, nameOf]) {
    const keyOf = (document: CapabilityDocument): string | undefined => {
      const text = textOf(document);
      return text === undefined ? undefined : sha256Hex(text);
    };
    const candidates = new Map<string, { documents: CapabilityDocument[]; next: number }>();
    for (const document of added) {
      const key = keyOf(document);
      if (key === undefined) continue;
      const entry = candidates.get(key) ?? { documents: [], next: 0 };
      entry.documents.push(document);
      candidates.set(key, entry);
    }
    for (const old of removed) {
      const key = keyOf(old);
      const entry = key === undefined || renames.has(old.folder) ? undefined : candidates.get(key);
      if (entry === undefined) continue;
      // Taken folders stay taken: each list is walked past them once.
      while (entry.next < entry.documents.length && taken.has(entry.documents[entry.next]!.folder)) entry.next += 1;
      const next = entry.documents[entry.next];
      if (next) {
        renames.set(old.folder, next.folder);
        taken.add(next.folder);
      }
    }
  }
  return renames;
}

export interface CompareOptions {
  /**
   * The toolsets served at the base and in the new tree: a change of a toolset is a change of
   * every capability that requires, optionally uses or names a tool of it. Left out by the caller
   * when a side's toolsets files do not parse (an error of their own; comparing with a half-read
   * file would call its toolsets removed).
   */
  toolsets?: { before: Toolsets; after: Toolsets };
  /**
   * Protocol files the gate cannot judge, each with why: at the base there but not read or parsed
   * (over a limit, over the parse budget), or serving an id that is not their folder's. The
   * capability in the new tree is not compared, and fails.
   */
  uncompared?: ReadonlyMap<string, string>;
}

/** The id a capability is served under when it is not its folder's (a registry that turned id-matches-folder off). */
export function idNotFolder(document: CapabilityDocument): string | undefined {
  const id = document.frontmatter.data?.id;
  return typeof id === 'string' && id !== document.folder ? id : undefined;
}

export function compareRegistries(base: readonly CapabilityDocument[], head: readonly CapabilityDocument[], options: CompareOptions = {}): GateResult {
  const baseByFolder = new Map(base.map((document) => [document.folder, document]));
  const headByFolder = new Map(head.map((document) => [document.folder, document]));
  const removedDocuments = base.filter((document) => !headByFolder.has(document.folder));
  const uncompared = options.uncompared ?? new Map<string, string>();
  const addedDocuments = head.filter((document) => !baseByFolder.has(document.folder) && !uncompared.has(document.file));
  const renames = findRenames(removedDocuments, addedDocuments);
  const renamedFrom = new Map([...renames].map(([from, to]) => [to, from]));

  const changes: CapabilityChange[] = [];
  const diagnostics: Diagnostic[] = [];
  const none: RequiredBump = { level: 'none', reasons: [] };
  const toolsetReasons = options.toolsets ? toolsetChanges(options.toolsets.before, options.toolsets.after) : new Map<string, BumpReason[]>();
  // A capability also uses a changed toolset when its body names one of that toolset's tools: what
  // foreign-tools keeps to its own toolsets, in a registry that may have turned that rule off.
  const changedTools = new Map<string, Set<string>>();
  for (const toolset of toolsetReasons.keys()) {
    for (const side of [options.toolsets?.before, options.toolsets?.after]) {
      for (const tool of Object.keys(side?.[toolset]?.tools ?? {})) changedTools.set(tool, (changedTools.get(tool) ?? new Set()).add(toolset));
    }
  }
  const toolNames = changedTools.size > 0 ? new NameIndex(changedTools.keys()) : undefined;
  // An unchanged file's base document is often the new tree's own: scanned once.
  const usedBy = new Map<CapabilityDocument, Set<string>>();
  const used = (document: CapabilityDocument): Set<string> => {
    let toolsets = usedBy.get(document);
    if (toolsets === undefined) {
      const named = toolNames ? findNames(document, toolNames).flatMap((mention) => [...(changedTools.get(mention.name) ?? [])]) : [];
      toolsets = new Set([...toolsetsUsed(document), ...named]);
      usedBy.set(document, toolsets);
    }
    return toolsets;
  };
  /** Reasons from the toolsets the capability used before and still uses (a toolset it just started using is its own reason). */
  const fromToolsets = (before: CapabilityDocument, after: CapabilityDocument): BumpReason[] => {
    if (toolsetReasons.size === 0) return [];
    const usedBefore = used(before);
    return capabilityToolsetReasons([...used(after)].flatMap((toolset) => (usedBefore.has(toolset) ? (toolsetReasons.get(toolset) ?? []) : [])));
  };

  for (const after of head) {
    const before = baseByFolder.get(after.folder);
    const unjudged = uncompared.get(after.file);
    if (unjudged !== undefined) {
      changes.push({
        id: after.folder,
        kind: 'changed',
        file: after.file,
        ...(before ? { before: versionFields(before) } : {}),
        after: versionFields(after),
        required: none,
        verdict: 'fail',
        problems: [unjudged],
        notCompared: true,
      });
      continue;
    }
    if (!before) {
      const from = renamedFrom.get(after.folder);
      changes.push({
        id: after.folder,
        kind: 'added',
        file: after.file,
        after: versionFields(after),
        required: none,
        verdict: 'pass',
        problems: [],
        ...(from ? { renamedFrom: from } : {}),
      });
      continue;
    }
    const [beforeFields, afterFields] = [versionFields(before), versionFields(after)];
    const toolsetChanged = fromToolsets(before, after);
    if (before.contentHash === after.contentHash && toolsetChanged.length === 0) {
      const unchanged: CapabilityChange = {
        id: after.folder,
        kind: 'unchanged',
        file: after.file,
        before: beforeFields,
        after: afterFields,
        required: none,
        verdict: 'pass',
        problems: [],
      };
      changes.push(unchanged);
      continue;
    }
    const own = before.contentHash === after.contentHash || servedContent(before) === servedContent(after) ? none : requiredBump(before, after);
    const required = toolsetChanged.length === 0 ? own : sortReasons([...own.reasons, ...toolsetChanged]);
    const versionsTouched = beforeFields.version !== afterFields.version || beforeFields.updated !== afterFields.updated;
    if (required.level === 'none' && !versionsTouched) {
      changes.push({
        id: after.folder,
        kind: 'unchanged',
        file: after.file,
        before: beforeFields,
        after: afterFields,
        required,
        verdict: 'pass',
        problems: [],
        servedUnchanged: true,
      });
      continue;
    }
    const { move, problems } = judgeVersions(beforeFields, afterFields, required);
    const range = versionRange(after);
    for (const problem of problems) {
      diagnostics.push({ file: after.file, ...range, severity: 'error', ruleId: problem.ruleId, message: problem.message, capabilityId: after.folder });
    }
    changes.push({
      id: after.folder,
      kind: 'changed',
      file: after.file,
      before: beforeFields,
      after: afterFields,
      required,
      ...(move !== undefined ? { move } : {}),
      verdict: problems.length > 0 ? 'fail' : 'pass',
      problems: problems.map((problem) => problem.message),
    });
  }

  for (const before of removedDocuments) {
    const to = renames.get(before.folder);
    const message = to ? formatMessage(GATE_MESSAGES.renamed, { id: before.folder, to }) : formatMessage(GATE_MESSAGES.removed, { id: before.folder });
    diagnostics.push({ file: before.file, ...FILE_START, severity: 'warning', ruleId: GATE_RULES.capabilityRemoved, message, capabilityId: before.folder });
    changes.push({
      id: before.folder,
      kind: 'removed',
      file: before.file,
      before: versionFields(before),
      required: none,
      verdict: 'breaking',
      problems: [message],
      ...(to ? { renamedTo: to } : {}),
    });
  }

  changes.sort(byKey((change) => change.id));
  return { changes, diagnostics };
}
