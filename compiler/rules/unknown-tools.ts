// unknown-tools: a name in the body that looks like a tool but that no toolset defines
// (`expense_sumbit` for `expense_submit`). An agent told to call it makes a call that fails, or
// guesses another tool.
//
// "Looks like a tool" has to leave ordinary snake_case words alone (`protocol_version`, error codes
// such as `period_invalid`; camelCase fields such as `retryAfterSeconds` are never candidates), so
// it rests on the names the toolsets define:
// - a lowercase snake_case word (at least two segments) is a candidate;
// - written as a whole code span (`` `name` `` or `` `name(…)` ``) or in a tools-table row, it is
//   tool-like when its first segment is the first segment of a defined tool;
// - anywhere else (a bare word), when its leading segments are a tool prefix: the prefix the tools
//   of one toolset share (`work_log`, `expense`) or a tool's name without its last segment.
// Each candidate costs a few Set lookups, so the rule is linear in the size of the body; the
// did-you-mean search runs only for the names reported.
import { suggestion } from '../did-you-mean.js';
import { bodyText, isRetiredEntry, isWordCode, matchesRetiredEntry, runsHolding } from '../mentions.js';
import { ruleDocsUrl, type LintCapability, type Rule } from '../rule.js';
import type { Range, Toolsets } from '../types.js';

/** Distinct unknown names reported per capability; past it, one diagnostic counts the rest. */
const MAX_REPORTED_NAMES = 50;
/** Leading segments looked up per candidate: tool prefixes are short, and this bounds the work per word. */
const MAX_PREFIX_SEGMENTS = 6;

const CANDIDATE = /^[a-z][a-z0-9]*(?:_[a-z0-9]+)+$/;
const WORD_CHAR = /[A-Za-z0-9_]/;

interface ToolPrefixes {
  /** First segments of defined tools: enough for a name written as code or in a tools table. */
  firstSegments: Set<string>;
  /** Shared toolset prefixes and tool names minus their last segment: needed for a bare word. */
  prefixes: Set<string>;
}

function commonSegments(names: readonly string[][]): string[] {
  const [first, ...rest] = names;
  if (!first) return [];
  let length = first.length - 1; // a prefix, never a whole name
  for (const other of rest) {
    let same = 0;
    while (same < length && same < other.length - 1 && other[same] === first[same]) same += 1;
    length = same;
  }
  return first.slice(0, length);
}

function toolPrefixes(toolsets: Toolsets): ToolPrefixes {
  const firstSegments = new Set<string>();
  const prefixes = new Set<string>();
  for (const toolset of Object.values(toolsets)) {
    const segmented = Object.keys(toolset.tools)
      .filter((tool) => CANDIDATE.test(tool))
      .map((tool) => tool.split('_'));
    for (const segments of segmented) {
      firstSegments.add(segments[0]!);
      prefixes.add(segments.slice(0, -1).join('_'));
    }
    const shared = commonSegments(segmented);
    if (shared.length > 0) prefixes.add(shared.join('_'));
  }
  return { firstSegments, prefixes };
}

/** Whether the word continues into a compound (`file_name.md`, `a/b_c`, `x-y_z`): a path or a file, not a tool. */
function inCompound(text: string, start: number, end: number): boolean {
  const before = text.charAt(start - 1);
  const after = text.charAt(end);
  return (
    ('./-'.includes(before) && before !== '' && WORD_CHAR.test(text.charAt(start - 2))) ||
    ('./-'.includes(after) && after !== '' && WORD_CHAR.test(text.charAt(end + 1)))
  );
}

/** Written as a whole code span: `` `name` `` or a call `` `name(…)` ``. */
function isCodeSpan(text: string, start: number, end: number): boolean {
  return text.charAt(start - 1) === '`' && (text.charAt(end) === '`' || text.charAt(end) === '(');
}

function hasPrefix(segments: readonly string[], prefixes: Set<string>): boolean {
  let prefix = '';
  const last = Math.min(segments.length - 1, MAX_PREFIX_SEGMENTS);
  for (let index = 0; index < last; index += 1) {
    prefix = index === 0 ? segments[0]! : `${prefix}_${segments[index]!}`;
    if (prefixes.has(prefix)) return true;
  }
  return false;
}

export const unknownTools: Rule = {
  meta: {
    id: 'unknown-tools',
    description: 'A tool-like name in the body (a code span, a tools-table row, or a word with a tool prefix) is defined by a toolset.',
    defaultLevel: 'warn',
    reads: 'document',
    docs: { url: ruleDocsUrl('unknown-tools') },
    defaultOptions: {},
    messages: {
      unknown:
        '`{{tool}}` looks like a tool but no toolset in {{toolsetsFile}} defines it; name a tool that exists, or declare a removed one in `retiredTools` and forbid it{{hint}}',
      more: '{{count}} more names look like tools that no toolset defines (only the first {{limit}} are reported)',
    },
  },
  check({ registry, report }) {
    // Without a usable toolsets.yaml every name would look unknown; toolsets-schema reports the file.
    // With a toolsets file unread, the tools it defines are unknown, not undefined.
    if (!registry.toolsetsSource.present || registry.toolsetsSource.data === undefined || registry.toolOwners.size === 0 || registry.toolsetsUnread) return;
    const { firstSegments, prefixes } = registry.derived.of(registry.toolsets, 'unknown-tools:prefixes', undefined, () => toolPrefixes(registry.toolsets));
    const hints = new Map<string, string>();
    const hintFor = (name: string): string => {
      let hint = hints.get(name);
      if (hint === undefined) {
        hint = suggestion(name, registry.toolOwners.keys());
        hints.set(name, hint);
      }
      return hint;
    };
    const known: KnownTools = { toolOwners: registry.toolOwners, firstSegments, prefixes, hintFor };

    for (const capability of registry.capabilities) {
      // The tool owners, prefixes and hints are derived from the toolsets (the same objects while
      // they are unchanged), so the toolsets are the context.
      const found = registry.derived.of(capability.document, 'unknown-tools', registry.toolsets, () => unknownNames(capability, known));
      for (const { name, range, hint } of found.reported) {
        report({
          capability,
          range,
          messageId: 'unknown',
          data: { tool: name, toolsetsFile: registry.toolsetsFile, hint },
          // A tool whose definition failed the schema is left out of the toolsets, so it looks undefined.
          dependsOn: [{ kind: 'toolsets-file' }, { kind: 'tool', name }],
        });
      }
      if (found.more) {
        report({
          capability,
          range: found.more.range,
          messageId: 'more',
          data: { count: found.more.count, limit: MAX_REPORTED_NAMES },
          dependsOn: [{ kind: 'toolsets-file' }],
        });
      }
    }
  },
};

interface KnownTools extends ToolPrefixes {
  toolOwners: ReadonlyMap<string, readonly string[]>;
  /** The did-you-mean of a name among the defined tools. */
  hintFor(name: string): string;
}

interface UnknownNames {
  /** The first {@link MAX_REPORTED_NAMES} distinct unknown names, each at every place it occurs. */
  reported: { name: string; range: Range; hint: string }[];
  /** How many more distinct names there are, and where the last of them is. */
  more?: { count: number; range: Range };
}

/** The unknown tool-like names of one protocol: a function of the document (frontmatter included) and the toolsets only. */
function unknownNames(capability: LintCapability, known: KnownTools): UnknownNames {
  const { document, fm } = capability;
  const { toolOwners, firstSegments, prefixes } = known;
  const retired = (fm.retiredTools ?? []).filter(isRetiredEntry);
  const tableLines = new Set(document.toolsTables.flatMap((table) => table.rows.map((row) => row.range.line)));
  const tableTools = new Set(document.toolsTables.flatMap((table) => table.rows.map((row) => `${row.range.line}\u0000${row.tool}`)));
  const body = bodyText(document);
  const text = body.text;
  const found: UnknownNames = { reported: [] };
  const reported = new Set<string>();
  const skipped = new Set<string>();
  let lastRange: Range | undefined;
  // Only words with `_` can be candidates: the scan jumps from one `_` to the next.
  runsHolding(text, '_', isWordCode, (start, end) => {
    const name = text.slice(start, end);
    if (!CANDIDATE.test(name) || toolOwners.has(name)) return;
    const segments = name.split('_');
    if (!firstSegments.has(segments[0]!) || inCompound(text, start, end)) return;
    let range: Range | undefined;
    if (!hasPrefix(segments, prefixes) && !isCodeSpan(text, start, end)) {
      if (tableLines.size === 0) return;
      range = body.range(start, end);
      if (!tableLines.has(range.line)) return;
    }
    if (retired.some((entry) => matchesRetiredEntry(name, entry))) return;
    range ??= body.range(start, end);
    // The tool cell of a tools-table row is tools-table's finding (with its own did-you-mean).
    if (tableTools.has(`${range.line}\u0000${name}`)) return;
    if (!reported.has(name) && reported.size >= MAX_REPORTED_NAMES) {
      skipped.add(name);
      lastRange = range;
      return;
    }
    reported.add(name);
    found.reported.push({ name, range, hint: known.hintFor(name) });
  });
  if (skipped.size > 0 && lastRange) found.more = { count: skipped.size, range: lastRange };
  return found;
}
