// retired-tools: every `retiredTools` entry (a tool name or a `prefix_*` glob) is named in the body
// inside a sentence that forbids it. Agents with old habits, or old conversations, keep calling a
// removed tool; only an explicit "never call `x`" in the protocol stops them.
import { findPattern, isRetiredEntry, retiredEntryPattern } from '../mentions.js';
import {
  DEFAULT_PROHIBITION_MARKERS,
  MARKERS_OPTION_SCHEMA,
  exampleMarkers,
  prohibitionMatcher,
  splitSentences,
  type MarkersOptions,
  type ProhibitionMatcher,
} from '../prohibitions.js';
import { ruleDocsUrl, type LintCapability, type Report, type Rule } from '../rule.js';
import { rangeForPath } from '../yaml-source.js';

export const retiredTools: Rule<MarkersOptions> = {
  meta: {
    id: 'retired-tools',
    description: 'Each `retiredTools` entry is named in the body inside a prohibition.',
    defaultLevel: 'error',
    reads: 'git',
    docs: { url: ruleDocsUrl('retired-tools') },
    optionsSchema: { type: 'object', properties: { markers: MARKERS_OPTION_SCHEMA } },
    defaultOptions: { markers: [...DEFAULT_PROHIBITION_MARKERS] },
    messages: {
      notNamed:
        'retired tool `{{entry}}` is not named in the body; forbid it in a sentence with a marker such as {{examples}}, e.g. "Never call `{{entry}}`: it no longer exists; use … instead."',
      notForbidden:
        '`{{mention}}` is a retired tool (`retiredTools: {{entry}}`) but no sentence that names it forbids it; say so in the same sentence with a marker such as {{examples}}, e.g. "Never call `{{mention}}`; it no longer exists."',
    },
  },
  check({ registry, options, report }) {
    // The markers decide what a fact says; the examples in its messages come from them too.
    const key = `retired-tools:${JSON.stringify(options.markers)}`;
    let markers: { matcher: ProhibitionMatcher; examples: string } | undefined;
    for (const capability of registry.capabilities) {
      if ((capability.fm.retiredTools ?? []).length === 0) continue;
      const problems = registry.derived.of(capability.document, key, undefined, () => {
        markers ??= { matcher: prohibitionMatcher(options.markers), examples: exampleMarkers(options.markers, 3) };
        return retiredToolProblems(capability, markers.matcher, markers.examples);
      });
      for (const problem of problems) report({ capability, ...problem });
    }
  },
};

/** What the rule reports about one capability (a fact of its document, for one set of markers). */
function retiredToolProblems(capability: LintCapability, matcher: ProhibitionMatcher, examples: string): Omit<Report, 'capability'>[] {
  const { document, fm } = capability;
  const found: Omit<Report, 'capability'>[] = [];
  // Sentences of prose blocks; a mention counts as forbidden when its sentence has a marker.
  const sentences = document.blocks.flatMap((block) => splitSentences(block.text).map((sentence) => sentence.text));
  const seen = new Set<string>();
  (fm.retiredTools ?? []).forEach((entry, index) => {
    // Malformed and duplicate entries are the schema's business (pattern, uniqueItems).
    if (seen.has(entry) || !isRetiredEntry(entry)) return;
    seen.add(entry);
    const pattern = retiredEntryPattern(entry);
    const forbidden = sentences.some((sentence) => {
      pattern.lastIndex = 0;
      return pattern.test(sentence) && matcher.test(sentence);
    });
    if (forbidden) return;
    const first = findPattern(document, pattern)[0];
    if (first) {
      found.push({ range: first.range, messageId: 'notForbidden', data: { mention: first.name.replace('\\*', '*'), entry, examples } });
    } else {
      found.push({
        range: rangeForPath(document.frontmatter.ranges, `/retiredTools/${index}`, document.frontmatter.range),
        messageId: 'notNamed',
        data: { entry, examples },
      });
    }
  });
  return found;
}
