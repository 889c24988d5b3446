// state-machine: every state the agent can meet has an entry in the body that names it and says
// what to do. An agent that does not know what PENDING or STALE means will guess; the entry is
// where the protocol tells it, including what not to do.
//
// Required entries: every state in frontmatter `states`, and every state (toolsets.yaml
// `tools.<tool>.states`) of a tool listed in the tools table.
// An entry: a list item or a table row (rows of a tools table excepted) that names the state as a
// whole word, case-sensitively, and has some text besides state names (at least three letters;
// a Chinese character counts as two).
// Undeclared entries (a lesser finding, always a warning): a list item or table row whose text
// starts with an ALL-CAPS identifier (`**STALE** — …`, `STALE: …`, `| STALE | … |`) that no
// declared state matches, in a section whose heading mentions states (the word state(s) or
// status(es), or 状态) or that holds entries for declared states. Both conditions together keep
// "IMPORTANT: …" or "CSV export …" in ordinary sections from being taken for states.
import { findNameIn, namePatternSource, namesPattern } from '../mentions.js';
import { fieldFact, ownToolsetFacts, type Fact } from '../facts.js';
import { ruleDocsUrl, type LintCapability, type LintRegistry, type Report, type Rule } from '../rule.js';
import type { TextBlock, ToolsTableRow } from '../types.js';
import { rangeForPath } from '../yaml-source.js';

/** An ALL-CAPS identifier at the start of an entry (two or more characters). */
const LEADING_STATE = /^([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*)(?![A-Za-z0-9_])/;
const STATE_SECTION = /\b(?:states?|status(?:es)?)\b|状态/i;
const MIN_WEIGHT = 3;

const LETTER = /\p{L}/u;
const HAN = /\p{Script=Han}/u;

/** Whether an entry says something besides state names: enough letters, CJK ideographs counting double. */
function saysSomething(text: string): boolean {
  let weight = 0;
  for (const char of text) {
    const code = char.charCodeAt(0);
    if ((code >= 65 && code <= 90) || (code >= 97 && code <= 122)) weight += 1;
    else if (code > 127 && LETTER.test(char)) weight += HAN.test(char) ? 2 : 1;
    if (weight >= MIN_WEIGHT) return true;
  }
  return false;
}

/** The longest state name (the schemas' `maxLength` for `states` and a tool's `states`); a longer one is the schema's to report. */
export const MAX_STATE_NAME = 128;
/**
 * The most states one capability's entries are checked against (declared and of its toolsets' tools
 * together): they make one regular expression, and V8 refuses one of ~17,000 alternatives.
 */
export const MAX_CHECKED_STATES = 1_024;

/** A state name the rule checks: not blank (the schema's minLength) and not over MAX_STATE_NAME. */
function isStateName(state: string): boolean {
  return state.trim() !== '' && state.length <= MAX_STATE_NAME;
}

/** What a capability's findings read of the registry besides its document: the toolsets (and the tool owners derived from them). */
type ToolsetsView = Pick<LintRegistry, 'toolsets' | 'toolOwners'>;

/** States of a tool: from the capability's own toolsets when they define it, else from every toolset that does. */
function statesOfTool(registry: ToolsetsView, tool: string, own: ReadonlySet<string>): readonly string[] {
  const owners = registry.toolOwners.get(tool) ?? [];
  if (owners.length === 1) return (registry.toolsets[owners[0]!]?.tools[tool]?.states ?? []).filter(isStateName);
  const mine = owners.filter((id) => own.has(id));
  const states = (mine.length > 0 ? mine : owners).flatMap((id) => registry.toolsets[id]?.tools[tool]?.states ?? []);
  return [...new Set(states)].filter(isStateName);
}

/** Per lint run: the states of each toolset's tools, and one name pattern per distinct set of states. */
interface RunCache {
  toolsetStates: Map<string, readonly string[]>;
  patterns: Map<string, RegExp | undefined>;
}

function toolsetStates(registry: ToolsetsView, cache: RunCache, id: string): readonly string[] {
  let states = cache.toolsetStates.get(id);
  if (!states) {
    states = [...new Set(Object.values(registry.toolsets[id]?.tools ?? {}).flatMap((tool) => tool.states ?? []))].filter(isStateName);
    cache.toolsetStates.set(id, states);
  }
  return states;
}

function statesPattern(cache: RunCache, states: ReadonlySet<string>): RegExp | undefined {
  const key = [...states].sort().join('\u0000');
  if (!cache.patterns.has(key)) cache.patterns.set(key, namesPattern(states));
  return cache.patterns.get(key);
}

function leadingState(block: TextBlock): string | undefined {
  const match = LEADING_STATE.exec(block.text);
  const token = match?.[1];
  return token !== undefined && token.length >= 2 ? token : undefined;
}

export const stateMachine: Rule = {
  meta: {
    id: 'state-machine',
    description: 'Every declared state and every state of a listed tool has an entry in the body that names it and says what to do.',
    defaultLevel: 'error',
    reads: 'document',
    docs: { url: ruleDocsUrl('state-machine') },
    defaultOptions: {},
    messages: {
      missingDeclared:
        'state "{{state}}" (declared in `states`) has no entry in the body; add a list item or table row that names it and says what the agent does, e.g. "- **{{state}}** — what it means; what to do and what not to do"',
      missingToolState:
        'state "{{state}}" of tool `{{tool}}` (listed in the tools table) has no entry in the body; add a list item or table row that names it and says what the agent does, e.g. "- **{{state}}** — what it means; what to do and what not to do"',
      caseMismatch: 'the entry for state "{{state}}" writes it "{{written}}"; state names are case-sensitive: write "{{state}}"',
      tooMany:
        'this capability has {{count}} states (in `states` and of the tools of its toolsets), more than the {{max}} this rule checks; none of its entries were checked: split the capability, or its toolsets',
      bare: 'the entry for state "{{state}}" only names it; say what the agent does in that state (and what it must not do)',
      undeclared:
        'entry for state "{{state}}", but neither `states` nor a tool of this capability declares it; add "{{state}}" to `states` (or to the tool\'s `states` in {{toolsetsFile}}), or remove the entry if no tool returns it',
    },
  },
  check({ registry, report }) {
    const cache: RunCache = { toolsetStates: new Map(), patterns: new Map() };
    for (const capability of registry.capabilities) {
      // The findings rest on the document (frontmatter included) and the toolsets (the tool owners
      // are derived from them and change with them).
      const findings = registry.derived.of(capability.document, 'state-machine', registry.toolsets, () => checkCapability(capability, registry, cache));
      // Every message gets the toolsets file's name here, outside the kept findings; a template without it ignores it.
      for (const finding of findings) {
        // With a toolsets file unread, a state no known tool declares may be one of its tools' states.
        if (finding.messageId === 'undeclared' && registry.toolsetsUnread) continue;
        report({ ...finding, capability, data: { ...finding.data, toolsetsFile: registry.toolsetsFile } });
      }
    }
  },
};

/** A diagnostic of one capability, before the capability is attached. */
type Finding = Omit<Report, 'capability'>;

/**
 * Characters of entries the case hint (`caseMismatch`) may read per capability. Each state without
 * an entry is looked for in every entry, in any case: 256 states and 800 KB of list items took 5.5 s
 * of one capability's lint, and 1,024 states and a file at `limits.maxFileBytes` would take
 * minutes. Past the budget a state without an entry is reported as missing, without the hint; the
 * budget counts characters, not time, so the same files always get the same findings. Real
 * capabilities read a few states times a few KB.
 */
export const MAX_CASE_HINT_CHARS = 4_000_000;

/** An entry that names the state in another case (`**Paid**` for PAID): the author meant it. Reads at most `budget.left` characters. */
function otherCase(entries: readonly TextBlock[], state: string, budget: { left: number }): { block: TextBlock; written: string } | undefined {
  const pattern = new RegExp(namePatternSource(state), 'iu');
  for (const block of entries) {
    if (block.text.length > budget.left) {
      budget.left = 0;
      return undefined;
    }
    budget.left -= block.text.length;
    const written = pattern.exec(block.text)?.[0];
    if (written !== undefined && written !== state) return { block, written };
  }
  return undefined;
}

/** What a required state rests on: its item in `states`, or the definition of the tool that has it. */
function whereFacts(capability: LintCapability, where: { index: number } | { tool: string }): Fact[] {
  return 'index' in where ? [fieldFact(capability, `/states/${where.index}`)] : [{ kind: 'tool', name: where.tool }];
}

/** The findings of one capability: a function of its document (frontmatter included) and the toolsets. */
function checkCapability(capability: LintCapability, registry: ToolsetsView, cache: RunCache): Finding[] {
  const { document, fm } = capability;
  const findings: Finding[] = [];
  // An unparsed frontmatter leaves the states and toolsets unknown, and its text may be read as body.
  const report = (entry: Finding): void => {
    findings.push({ ...entry, dependsOn: [{ kind: 'frontmatter', file: document.file }, ...(entry.dependsOn ?? [])] });
  };
  const own = new Set([...(fm.requiredToolsets ?? []), ...(fm.optionalToolsets ?? [])]);

  // Required states, each with where to report it when its entry is missing.
  const fmStates = fm.states ?? [];
  const required = new Map<string, { index: number } | { tool: string; row: ToolsTableRow }>();
  fmStates.forEach((state, index) => {
    // An empty or over-long name is the schema's business (minLength, maxLength).
    if (isStateName(state) && !required.has(state)) required.set(state, { index });
  });
  for (const table of document.toolsTables) {
    for (const row of table.rows) {
      for (const state of statesOfTool(registry, row.tool, own)) if (!required.has(state)) required.set(state, { tool: row.tool, row });
    }
  }

  // Declared: what an entry may document without a warning.
  const declared = new Set(required.keys());
  for (const id of own) for (const state of toolsetStates(registry, cache, id)) declared.add(state);

  // "nothing declares" and "too many" rest on `states`, the capability's toolsets and the
  // definitions of the tools its table lists.
  const declaredFacts: Fact[] = [
    fieldFact(capability, '/states'),
    ...ownToolsetFacts(capability),
    ...document.toolsTables.flatMap((table) => table.rows.map((row): Fact => ({ kind: 'tool', name: row.tool }))),
  ];
  if (declared.size > MAX_CHECKED_STATES) {
    const range = rangeForPath(document.frontmatter.ranges, '/states', document.frontmatter.range, 'key');
    report({ range, messageId: 'tooMany', data: { count: String(declared.size), max: String(MAX_CHECKED_STATES) }, dependsOn: declaredFacts });
    return findings;
  }

  const toolsTableLines = new Set(document.toolsTables.flatMap((table) => table.rows.map((row) => row.range.line)));
  const entries = document.blocks.filter((block) => block.kind === 'listItem' || (block.kind === 'tableRow' && !toolsTableLines.has(block.range.line)));

  const documented = new Set<string>();
  const bare = new Map<string, TextBlock>();
  const pattern = statesPattern(cache, declared);
  if (pattern) {
    for (const block of entries) {
      const named = new Set([...block.text.matchAll(pattern)].map((match) => match[0]));
      if (named.size === 0) continue;
      const says = saysSomething(block.text.replace(pattern, ' '));
      for (const state of named) {
        if (says) documented.add(state);
        else if (!bare.has(state)) bare.set(state, block);
      }
    }
  }

  const hintBudget = { left: MAX_CASE_HINT_CHARS };
  for (const [state, where] of required) {
    if (documented.has(state)) continue;
    const bareEntry = bare.get(state);
    const misspelt = bareEntry ? undefined : otherCase(entries, state, hintBudget);
    if (bareEntry) {
      const range = findNameIn(document, state, bareEntry.range)?.range ?? bareEntry.range;
      report({ range, messageId: 'bare', data: { state }, dependsOn: whereFacts(capability, where) });
    } else if (misspelt) {
      const { block, written } = misspelt;
      const range = findNameIn(document, written, block.range)?.range ?? block.range;
      report({ range, messageId: 'caseMismatch', data: { state, written }, dependsOn: whereFacts(capability, where) });
    } else if ('index' in where) {
      const range = rangeForPath(document.frontmatter.ranges, `/states/${where.index}`, document.frontmatter.range);
      report({ range, messageId: 'missingDeclared', data: { state }, dependsOn: whereFacts(capability, where) });
    } else {
      const range = findNameIn(document, where.tool, where.row.range)?.range ?? where.row.range;
      report({ range, messageId: 'missingToolState', data: { state, tool: where.tool }, dependsOn: whereFacts(capability, where) });
    }
  }

  // Entries for states nothing declares, in sections about states.
  const stateSections = new Set(entries.filter((block) => declared.has(leadingState(block) ?? '')).map((block) => block.section));
  for (const block of entries) {
    const state = leadingState(block);
    if (state === undefined || declared.has(state)) continue;
    if (!STATE_SECTION.test(block.section) && !stateSections.has(block.section)) continue;
    const range = findNameIn(document, state, block.range)?.range ?? block.range;
    report({ range, messageId: 'undeclared', data: { state }, severity: 'warning', dependsOn: declaredFacts });
  }
  return findings;
}
