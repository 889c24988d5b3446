// negative-rules: the protocol states at least one explicit prohibition. An agent follows the
// happy path well; what it gets wrong is what nobody told it not to do, so every protocol must say
// at least once, in plain words, what is forbidden. The markers (English and Chinese) are an option.
import { FILE_START } from '../positions.js';
import { DEFAULT_PROHIBITION_MARKERS, MARKERS_OPTION_SCHEMA, exampleMarkers, prohibitionMatcher, type MarkersOptions } from '../prohibitions.js';
import { ruleDocsUrl, type Rule } from '../rule.js';
import type { CapabilityDocument, Range } from '../types.js';

/** The first non-blank line of the body, or the start of the file when the body is empty. */
function bodyStart(document: CapabilityDocument): Range {
  const lines = document.body.split('\n');
  const index = lines.findIndex((line) => line.trim() !== '');
  if (index < 0) return FILE_START;
  const text = lines[index] ?? '';
  const line = document.bodyStartLine + index;
  const column = text.length - text.trimStart().length + 1;
  return { line, column, endLine: line, endColumn: text.trimEnd().length + 1 };
}

export const negativeRules: Rule<MarkersOptions> = {
  meta: {
    id: 'negative-rules',
    description: 'The protocol body states at least one explicit prohibition.',
    defaultLevel: 'error',
    reads: 'document',
    docs: { url: ruleDocsUrl('negative-rules') },
    optionsSchema: { type: 'object', properties: { markers: MARKERS_OPTION_SCHEMA } },
    defaultOptions: { markers: [...DEFAULT_PROHIBITION_MARKERS] },
    messages: {
      missing:
        'the protocol states no explicit prohibition; add at least one rule that says what the agent must not do, with a marker such as {{examples}} (e.g. "Never invent figures the user did not give.")',
    },
  },
  check({ registry, options, report }) {
    const markers = options.markers;
    const matcher = prohibitionMatcher(markers);
    // Whether a document forbids something rests on its blocks and the markers (the key) alone.
    const key = `negative-rules:${JSON.stringify(markers)}`;
    let examples: string | undefined;
    for (const capability of registry.capabilities) {
      const { document } = capability;
      // Prose only (paragraphs, list items, table rows, headings): a marker inside a code sample is
      // not a rule for the agent.
      const forbids = registry.derived.of(document, key, undefined, () => document.blocks.some((block) => matcher.test(block.text)));
      if (forbids) continue;
      examples ??= exampleMarkers(markers);
      report({ capability, range: bodyStart(document), messageId: 'missing', data: { examples } });
    }
  },
};
