// The version bump a change needs (SPEC §5), with the reasons that decide it. Pure: two parsed
// PROTOCOL.md documents of the same capability in, a level and its reasons out.
//
// The principle behind the table (docs/gate.md has it in full): a change that can break an agent
// or a caller that relied on the old protocol (it sees the capability less often, a tool, state or
// trigger it used is gone, a tool it called is now forbidden) is major; a change that only adds
// what callers may use is minor; anything else that changes what is served is patch.
import { canonicalJson } from '../canonical.js';
import { truncate } from '../formatters/escape.js';
import { findNames, NameIndex } from '../mentions.js';
import { schemaPropertyOrder } from '../render.js';
import { formatMessage } from '../rule.js';
import type { CapabilityDocument, ToolAction, Toolsets } from '../types.js';
import { BUMP_ORDER, type BumpLevel } from './semver.js';

export type ReasonCode = keyof typeof REASONS;

export interface BumpReason {
  code: ReasonCode;
  level: BumpLevel;
  /** What changed, e.g. "requiredToolsets gained `billing`". */
  text: string;
}

export interface RequiredBump {
  /** `none` when nothing that is served changed (e.g. only line endings or YAML layout). */
  level: BumpLevel | 'none';
  /** Every reason found, the decisive (highest-level) ones first. */
  reasons: BumpReason[];
}

/** One entry per kind of change: its level and how it is described. Message text lives here only. */
export const REASONS = {
  'required-toolset-added': { level: 'major', message: 'requiredToolsets gained {{items}}' },
  'tool-removed': { level: 'major', message: 'tools table lost {{items}}' },
  'state-removed': { level: 'major', message: 'states lost {{items}}' },
  'state-unnamed': { level: 'major', message: 'the body no longer names state {{items}}' },
  'trigger-removed': { level: 'major', message: 'whenToUse lost {{items}}' },
  'retired-tool-added': { level: 'major', message: 'retiredTools gained {{items}}' },
  'scope-constraint-removed': { level: 'major', message: 'scopeConstraints lost {{items}}' },
  'schema-removed': { level: 'major', message: '{{field}} removed' },
  'schema-changed': { level: 'major', message: '{{field}} changed' },
  'list-not-comparable': { level: 'major', message: '{{field}} changed and is not a list of names on both sides, so what it gained or lost is unknown' },
  'toolset-removed': { level: 'major', message: 'toolset `{{toolset}}` removed from the toolsets' },
  'toolset-tool-removed': { level: 'major', message: 'toolset `{{toolset}}` lost tool {{items}}' },
  'toolset-action-raised': { level: 'major', message: 'toolset `{{toolset}}`: tool `{{tool}}` action {{from}} → {{to}}' },
  'toolset-states-removed': { level: 'major', message: 'toolset `{{toolset}}`: tool `{{tool}}` states lost {{items}}' },
  'trigger-added': { level: 'minor', message: 'whenToUse gained {{items}}' },
  'optional-toolset-added': { level: 'minor', message: 'optionalToolsets gained {{items}}' },
  'optional-toolset-removed': { level: 'minor', message: 'optionalToolsets lost {{items}}' },
  'required-toolset-removed': { level: 'minor', message: 'requiredToolsets lost {{items}} (more callers can see it)' },
  'state-added': { level: 'minor', message: 'states gained {{items}}' },
  'tool-added': { level: 'minor', message: 'tools table gained {{items}}' },
  'section-added': { level: 'minor', message: 'section added: {{items}}' },
  'section-removed': { level: 'minor', message: 'section removed: {{items}}' },
  'retired-tool-removed': { level: 'minor', message: 'retiredTools lost {{items}}' },
  'scope-constraint-added': { level: 'minor', message: 'scopeConstraints gained {{items}}' },
  'constraint-added': { level: 'minor', message: 'constraints gained {{items}}' },
  'constraint-removed': { level: 'minor', message: 'constraints lost {{items}}' },
  'evidence-type-added': { level: 'minor', message: 'evidenceTypes gained {{items}}' },
  'evidence-type-removed': { level: 'minor', message: 'evidenceTypes lost {{items}}' },
  'schema-added': { level: 'minor', message: '{{field}} added' },
  'toolset-tool-added': { level: 'minor', message: 'toolset `{{toolset}}` gained tool {{items}}' },
  'toolset-action-lowered': { level: 'minor', message: 'toolset `{{toolset}}`: tool `{{tool}}` action {{from}} → {{to}} (more callers can use it)' },
  'toolset-states-added': { level: 'minor', message: 'toolset `{{toolset}}`: tool `{{tool}}` states gained {{items}}' },
  'toolset-more': { level: 'patch', message: 'toolset `{{toolset}}`: {{count}} more tool changes' },
  'toolsets-more': { level: 'patch', message: '{{count}} more reasons from the toolsets it uses' },
  'section-renamed': { level: 'patch', message: 'section renamed: {{items}}' },
  'trigger-reworded': { level: 'patch', message: 'whenToUse reworded (case or spacing): {{items}}' },
  'list-reordered': { level: 'patch', message: '{{field}} reordered' },
  'field-changed': { level: 'patch', message: '{{field}} changed' },
  'body-changed': { level: 'patch', message: 'protocol wording changed' },
} as const satisfies Record<string, { level: BumpLevel; message: string }>;

/** Fields the gate itself owns: they are compared by the verdict, not as content. */
const VERSION_FIELDS = new Set(['protocol_version', 'protocol_updated']);

/** List fields whose items are compared one by one: [field, code when an item is added, when removed]. */
const SET_FIELDS: readonly [string, ReasonCode, ReasonCode][] = [
  ['requiredToolsets', 'required-toolset-added', 'required-toolset-removed'],
  ['optionalToolsets', 'optional-toolset-added', 'optional-toolset-removed'],
  ['states', 'state-added', 'state-removed'],
  ['retiredTools', 'retired-tool-added', 'retired-tool-removed'],
  ['scopeConstraints', 'scope-constraint-added', 'scope-constraint-removed'],
  ['evidenceTypes', 'evidence-type-added', 'evidence-type-removed'],
];
const SCHEMA_FIELDS = new Set(['inputSchema', 'outputSchema']);
const MAX_ITEMS = 5;
/** A heading can be as long as its file: each item is cut, or one reason would repeat it in every output. */
const MAX_ITEM_LENGTH = 100;

/** "old → new", each side cut so the item stays within MAX_ITEM_LENGTH: cut whole, a long old name hid the new one. */
function renamedItem(before: string, after: string): string {
  const side = (MAX_ITEM_LENGTH - 3) >> 1;
  return `${truncate(before, side)} → ${truncate(after, side)}`;
}

/** "`a`, `b` and 3 more". */
export function formatItems(items: readonly string[]): string {
  const shown = items.slice(0, MAX_ITEMS).map((item) => `\`${truncate(item, MAX_ITEM_LENGTH).replace(/`/g, "'")}\``);
  const rest = items.length - shown.length;
  return rest > 0 ? `${shown.join(', ')} and ${rest} more` : shown.join(', ');
}

function reason(code: ReasonCode, data: { items?: readonly string[]; field?: string; names?: Record<string, string> }): BumpReason {
  const entry = REASONS[code];
  const text = formatMessage(entry.message, {
    ...(data.items ? { items: formatItems(data.items) } : {}),
    ...(data.field ? { field: data.field } : {}),
    ...data.names,
  });
  return { code, level: entry.level, text };
}

function stringList(value: unknown): string[] | undefined {
  if (value === undefined || value === null) return [];
  return Array.isArray(value) && value.every((item) => typeof item === 'string') ? value : undefined;
}

function missingFrom(items: readonly string[], other: readonly string[]): string[] {
  const present = new Set(other);
  return [...new Set(items.filter((item) => !present.has(item)))];
}

const sameList = (a: readonly unknown[], b: readonly unknown[]): boolean => canonicalJson(a) === canonicalJson(b);

/** Triggers route by meaning: case and spacing alone are wording. */
function triggerKey(trigger: string): string {
  return trigger.normalize('NFC').trim().replace(/\s+/g, ' ').toLowerCase();
}

function compareSet(field: string, before: string[], after: string[], added: ReasonCode, removed: ReasonCode, out: BumpReason[]): void {
  const gained = missingFrom(after, before);
  const lost = missingFrom(before, after);
  if (gained.length > 0) out.push(reason(added, { items: gained }));
  if (lost.length > 0) out.push(reason(removed, { items: lost }));
  if (gained.length === 0 && lost.length === 0 && !sameList(before, after)) out.push(reason('list-reordered', { field }));
}

function compareTriggers(before: string[], after: string[], out: BumpReason[]): void {
  const beforeKeys = new Map(before.map((trigger) => [triggerKey(trigger), trigger]));
  const afterKeys = new Map(after.map((trigger) => [triggerKey(trigger), trigger]));
  const gained = [...afterKeys].filter(([key]) => !beforeKeys.has(key)).map(([, trigger]) => trigger);
  const lost = [...beforeKeys].filter(([key]) => !afterKeys.has(key)).map(([, trigger]) => trigger);
  const reworded = [...afterKeys]
    .filter(([key, trigger]) => beforeKeys.has(key) && beforeKeys.get(key) !== trigger)
    .map(([key, trigger]) => renamedItem(beforeKeys.get(key) ?? '', trigger));
  if (gained.length > 0) out.push(reason('trigger-added', { items: gained }));
  if (lost.length > 0) out.push(reason('trigger-removed', { items: lost }));
  if (reworded.length > 0) out.push(reason('trigger-reworded', { items: reworded }));
  if (gained.length === 0 && lost.length === 0 && reworded.length === 0 && !sameList(before, after)) {
    out.push(reason('list-reordered', { field: 'whenToUse' }));
  }
}

function toolsOf(document: CapabilityDocument): string[] {
  return [...new Set(document.toolsTables.flatMap((table) => table.rows.map((row) => row.tool)))];
}

function headingsOf(document: CapabilityDocument): string[] {
  return document.blocks.filter((block) => block.kind === 'heading').map((block) => block.text);
}

/**
 * Sections are compared by heading. A heading whose text changed at the same place in an outline
 * of the same length is a rename (wording); otherwise new headings are added sections.
 */
function compareSections(before: string[], after: string[], out: BumpReason[]): void {
  const keys = (list: string[]): string[] => list.map(triggerKey);
  const [beforeKeys, afterKeys] = [keys(before), keys(after)];
  if (canonicalJson(beforeKeys) === canonicalJson(afterKeys)) return;
  if (before.length === after.length) {
    const differing = beforeKeys.flatMap((key, index) => (key === afterKeys[index] ? [] : [index]));
    // Sets, not includes(): a scan of the outline per heading made 20,000 renamed headings 4 s.
    const [beforeSet, afterSet] = [new Set(beforeKeys), new Set(afterKeys)];
    const renamed = differing.every((index) => !afterSet.has(beforeKeys[index]!) && !beforeSet.has(afterKeys[index]!));
    if (renamed) {
      out.push(reason('section-renamed', { items: differing.map((index) => renamedItem(before[index]!, after[index]!)) }));
      return;
    }
  }
  const remaining = new Map<string, number>();
  for (const key of beforeKeys) remaining.set(key, (remaining.get(key) ?? 0) + 1);
  const gained: string[] = [];
  after.forEach((heading, index) => {
    const key = afterKeys[index]!;
    const count = remaining.get(key) ?? 0;
    if (count > 0) remaining.set(key, count - 1);
    else gained.push(heading);
  });
  const lost = before.filter((_, index) => {
    const key = beforeKeys[index]!;
    const count = remaining.get(key) ?? 0;
    if (count > 0) {
      remaining.set(key, count - 1);
      return true;
    }
    return false;
  });
  if (gained.length > 0) out.push(reason('section-added', { items: gained }));
  if (lost.length > 0) out.push(reason('section-removed', { items: lost }));
}

function describeConstraint(value: unknown): string {
  if (typeof value === 'object' && value !== null && 'rationalization' in value && typeof value.rationalization === 'string') {
    return value.rationalization;
  }
  return canonicalJson(value);
}

function compareConstraints(before: unknown, after: unknown, out: BumpReason[]): void {
  const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : value === undefined ? [] : [value]);
  const beforeKeys = new Set(list(before).map((item) => canonicalJson(item)));
  const afterKeys = new Set(list(after).map((item) => canonicalJson(item)));
  const gained = list(after).filter((item) => !beforeKeys.has(canonicalJson(item)));
  const lost = list(before).filter((item) => !afterKeys.has(canonicalJson(item)));
  if (gained.length > 0) out.push(reason('constraint-added', { items: gained.map(describeConstraint) }));
  if (lost.length > 0) out.push(reason('constraint-removed', { items: lost.map(describeConstraint) }));
  if (gained.length === 0 && lost.length === 0 && canonicalJson(before) !== canonicalJson(after)) {
    out.push(reason('list-reordered', { field: 'constraints' }));
  }
}

function compareFrontmatter(before: Record<string, unknown>, after: Record<string, unknown>, out: BumpReason[]): void {
  const handled = new Set<string>(VERSION_FIELDS);
  // A list field that is not a list of names on one side (the schema refuses it, but a registry
  // may lower that rule) changed in ways the gate cannot weigh: major, the level that cannot be too small.
  const uncomparable = (field: string): void => {
    if (canonicalJson(before[field]) !== canonicalJson(after[field])) out.push(reason('list-not-comparable', { field }));
    handled.add(field);
  };
  const triggersBefore = stringList(before.whenToUse);
  const triggersAfter = stringList(after.whenToUse);
  if (triggersBefore && triggersAfter) {
    compareTriggers(triggersBefore, triggersAfter, out);
    handled.add('whenToUse');
  } else {
    uncomparable('whenToUse');
  }
  for (const [field, added, removed] of SET_FIELDS) {
    const listBefore = stringList(before[field]);
    const listAfter = stringList(after[field]);
    if (!listBefore || !listAfter) {
      uncomparable(field);
      continue;
    }
    compareSet(field, listBefore, listAfter, added, removed, out);
    handled.add(field);
  }
  compareConstraints(before.constraints, after.constraints, out);
  handled.add('constraints');
  const fields = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((field) => !handled.has(field)).sort();
  for (const field of fields) {
    const [was, is] = [before[field], after[field]];
    if (canonicalJson(was) === canonicalJson(is)) {
      if (SCHEMA_FIELDS.has(field) && schemaPropertyOrder(was).join('\n') !== schemaPropertyOrder(is).join('\n')) {
        out.push(reason('list-reordered', { field: `${field} properties` }));
      }
      continue;
    }
    if (SCHEMA_FIELDS.has(field)) {
      out.push(reason(was === undefined ? 'schema-added' : is === undefined ? 'schema-removed' : 'schema-changed', { field }));
    } else {
      out.push(reason('field-changed', { field }));
    }
  }
}

const MAX_TOOLSET_REASONS = 8;

/** Who may call a tool: a scope `<toolset>:<action>` includes the lower actions (SPEC §6). */
const ACTION_RANK: Record<ToolAction, number> = { read: 0, write: 1, admin: 2 };

/**
 * What changed in each toolset between two versions of toolsets.yaml, as bump reasons, keyed by
 * toolset id (only toolsets with a change). Computed once per check and shared by every capability
 * that uses the toolset. A raised action means fewer callers can use the tool, a lost tool or state
 * is something a protocol may rely on: major. The reverse is an addition: minor. Descriptions are
 * not compared: they are guidance, not who may call what.
 */
export function toolsetChanges(before: Toolsets, after: Toolsets): Map<string, BumpReason[]> {
  const changes = new Map<string, BumpReason[]>();
  for (const [toolset, old] of Object.entries(before)) {
    const names = { toolset: toolset.replace(/`/g, "'") };
    const next = after[toolset];
    if (!next) {
      changes.set(toolset, [reason('toolset-removed', { names })]);
      continue;
    }
    const out: BumpReason[] = [];
    const lost = Object.keys(old.tools).filter((tool) => !Object.hasOwn(next.tools, tool));
    const gained = Object.keys(next.tools).filter((tool) => !Object.hasOwn(old.tools, tool));
    if (lost.length > 0) out.push(reason('toolset-tool-removed', { items: lost, names }));
    if (gained.length > 0) out.push(reason('toolset-tool-added', { items: gained, names }));
    for (const [tool, was] of Object.entries(old.tools)) {
      const is = Object.hasOwn(next.tools, tool) ? next.tools[tool] : undefined;
      if (!is) continue;
      const toolNames = { ...names, tool: tool.replace(/`/g, "'"), from: was.action, to: is.action };
      if (ACTION_RANK[is.action] > ACTION_RANK[was.action]) out.push(reason('toolset-action-raised', { names: toolNames }));
      if (ACTION_RANK[is.action] < ACTION_RANK[was.action]) out.push(reason('toolset-action-lowered', { names: toolNames }));
      const statesLost = missingFrom(was.states ?? [], is.states ?? []);
      const statesGained = missingFrom(is.states ?? [], was.states ?? []);
      if (statesLost.length > 0) out.push(reason('toolset-states-removed', { items: statesLost, names: toolNames }));
      if (statesGained.length > 0) out.push(reason('toolset-states-added', { items: statesGained, names: toolNames }));
    }
    if (out.length === 0) continue;
    // A toolset rewritten wholesale would repeat one line per tool in every capability's row: the
    // decisive ones are kept (sorted first, so the level stands) and the rest counted.
    const kept = sortReasons(out).reasons.slice(0, MAX_TOOLSET_REASONS);
    if (out.length > kept.length) kept.push(reason('toolset-more', { names: { ...names, count: String(out.length - kept.length) } }));
    changes.set(toolset, kept);
  }
  return changes;
}

/** Toolset reasons kept per capability: up to 9 per toolset it uses, and it may use hundreds. */
const MAX_CAPABILITY_TOOLSET_REASONS = 16;

/**
 * The reasons of the changed toolsets a capability uses, the decisive ones kept (sorted first, so the
 * level stands) and the rest counted: one using 256 toolsets all edited carried 2,304 of them into its
 * row and both its messages, and 1,000 such capabilities made a JSON report too long for a string.
 */
export function capabilityToolsetReasons(reasons: BumpReason[]): BumpReason[] {
  if (reasons.length <= MAX_CAPABILITY_TOOLSET_REASONS) return reasons;
  const kept = sortReasons([...reasons]).reasons.slice(0, MAX_CAPABILITY_TOOLSET_REASONS);
  kept.push(reason('toolsets-more', { names: { count: String(reasons.length - kept.length) } }));
  return kept;
}

/** The toolsets a capability uses (required and optional), when its frontmatter lists them as text. */
export function toolsetsUsed(document: CapabilityDocument): string[] {
  const data = document.frontmatter.data ?? {};
  return [...new Set([...(stringList(data.requiredToolsets) ?? []), ...(stringList(data.optionalToolsets) ?? [])])];
}

/** The decisive reasons first, in the order they were found within a level; the level is theirs. */
export function sortReasons(reasons: BumpReason[]): RequiredBump {
  reasons.sort((a, b) => BUMP_ORDER[b.level] - BUMP_ORDER[a.level]);
  return { level: reasons[0]?.level ?? 'none', reasons };
}

/**
 * The bump that the change from `before` to `after` needs. Frontmatter is compared as parsed data
 * and the body after line endings are normalized (the parser does that), so a change of line
 * endings, YAML layout or comments needs no bump: what is served stays the same.
 */
export function requiredBump(before: CapabilityDocument, after: CapabilityDocument): RequiredBump {
  const reasons: BumpReason[] = [];
  compareFrontmatter(before.frontmatter.data ?? {}, after.frontmatter.data ?? {}, reasons);
  if (before.body !== after.body) {
    const toolsBefore = toolsOf(before);
    const toolsAfter = toolsOf(after);
    const gained = missingFrom(toolsAfter, toolsBefore);
    const lost = missingFrom(toolsBefore, toolsAfter);
    if (lost.length > 0) reasons.push(reason('tool-removed', { items: lost }));
    if (gained.length > 0) reasons.push(reason('tool-added', { items: gained }));
    compareSections(headingsOf(before), headingsOf(after), reasons);
    // A state still declared whose entry is gone: the protocol no longer says what to do in it
    // (state-machine requires the entry, but a registry may turn that rule off).
    const declaredBefore = new Set(stringList(before.frontmatter.data?.states) ?? []);
    const declared = [...new Set(stringList(after.frontmatter.data?.states) ?? [])].filter((state) => declaredBefore.has(state));
    if (declared.length > 0) {
      const names = new NameIndex(declared);
      const unnamed = missingFrom(
        findNames(before, names).map((mention) => mention.name),
        findNames(after, names).map((mention) => mention.name),
      );
      if (unnamed.length > 0) reasons.push(reason('state-unnamed', { items: unnamed }));
    }
    reasons.push(reason('body-changed', {}));
  }
  return sortReasons(reasons);
}
