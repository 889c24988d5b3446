// Author text (folder names, paths, ids, messages that quote them, eval requests) as each output
// kind must show it: one function per kind, shared by every formatter. Ordinary text comes out as it
// went in; only what a terminal, a CI runner or a Markdown renderer would act on is changed.

/**
 * Characters shown as escapes in plain text: C0 controls, DEL, C1 controls, the Unicode line and
 * paragraph separators, and the bidirectional marks and overrides (which reorder what a reader sees).
 */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * Plain text on one line (stylish, stderr lines): a line break is `\n`, any other control character
 * `\u001b` and the like, so that one diagnostic stays one line and no line can start a workflow
 * command (`::error ...`) or reach a terminal as an escape sequence.
 */
export function plainText(text: string): string {
  return text.replace(CONTROL, (char) => NAMED[char] ?? `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Markdown's one line: a line break becomes a space (as it always did), other controls escapes. */
function markdownLine(text: string): string {
  return plainText(text.replace(/\r?\n/g, ' '));
}

/**
 * Markdown text outside code spans, also safe in a table cell: every character that could open a
 * link, image, HTML, emphasis, strikethrough, math or a table cell is backslash-escaped. GFM links a
 * bare URL or e-mail address even when its punctuation is escaped, and GitHub turns `@name` into a
 * mention: a word joiner (U+2060, invisible) after `@`, in `://` and in `www.` stops all three.
 */
export function markdownText(text: string): string {
  return markdownLine(text)
    .replace(/[\\`*_~[\]<&|$]/g, '\\$&')
    .replace(/@/g, '@\u2060')
    .replace(/:\/\//g, ':\u2060//')
    .replace(/(www)\./gi, '$1\u2060.');
}

/**
 * A Markdown code span holding `text` literally: a backtick fence longer than any run of backticks
 * inside, with the spaces CommonMark strips added where it would strip them. In a table `cell`,
 * `\` and `|` are escaped as GFM reads the row before the span (shown doubled, `\` never ends a cell).
 */
export function markdownCode(text: string, options: { cell?: boolean } = {}): string {
  let code = markdownLine(text);
  if (code === '') return '';
  if (options.cell) code = code.replace(/\\/g, '\\\\').replace(/\|/g, '\\|');
  // A reduce, not Math.max(...runs): a text of 200,000 runs would overflow the call's arguments.
  const longestRun = (code.match(/`+/g) ?? []).reduce((longest, run) => Math.max(longest, run.length), 0);
  const fence = '`'.repeat(longestRun + 1);
  const pad = /^`|`$/.test(code) || (/^ /.test(code) && / $/.test(code) && /[^ ]/.test(code)) ? ' ' : '';
  return `${fence}${pad}${code}${pad}${fence}`;
}

/**
 * A message that quotes names in backticks (as the rules write them), for Markdown: each quoted part
 * a code span, the rest text. A backtick inside a quoted name only moves where a span starts or ends.
 */
export function markdownMessage(text: string, options: { cell?: boolean } = {}): string {
  return text
    .split('`')
    .map((part, index) => (index % 2 === 1 ? markdownCode(part, options) : markdownText(part)))
    .join('');
}

/** `text` cut to at most `max` UTF-16 units, ending in `…` when cut, never on half of a surrogate pair. */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max - 1).replace(/[\uD800-\uDBFF]$/, '')}…`;
}
