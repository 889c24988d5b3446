// toolset-exists: every toolset named in `requiredToolsets` / `optionalToolsets` is defined in
// capabilities/toolsets.yaml; a typo would otherwise hide a capability from every caller.
import { didYouMeanEach, suggestionText } from '../did-you-mean.js';
import { fieldFact } from '../facts.js';
import { ruleDocsUrl, type LintCapability, type Report, type Rule } from '../rule.js';
import type { ParsedToolsets } from '../toolsets.js';
import { rangeForPath } from '../yaml-source.js';

export const toolsetExists: Rule = {
  meta: {
    id: 'toolset-exists',
    description: 'Every toolset id in the frontmatter exists in toolsets.yaml.',
    defaultLevel: 'error',
    reads: 'git',
    docs: { url: ruleDocsUrl('toolset-exists') },
    defaultOptions: {},
    messages: {
      unknown: 'toolset "{{toolset}}" in `{{field}}` is not defined in {{toolsetsFile}}{{hint}}',
    },
  },
  check({ registry, report }) {
    const source = registry.toolsetsSource;
    // A missing or unparsable toolsets.yaml is reported once, by toolsets-schema, not here once
    // per toolset. A toolset that is defined but malformed exists (toolsets-schema says what is wrong with it).
    // So is a toolsets file that was not read or parsed: the toolsets it defines are unknown, not missing.
    if (!source.present || registry.toolsetsUnread) return;
    for (const capability of registry.capabilities) {
      // A fact of the document and of the toolsets as parsed (kept while no toolsets file changes).
      const problems = registry.derived.of(capability.document, 'toolset-exists', source, () => unknownToolsets(capability, source, registry.toolsetsFile));
      for (const problem of problems) report({ capability, ...problem });
    }
  },
};

const NONE: readonly never[] = Object.freeze([]);

function unknownToolsets(capability: LintCapability, source: ParsedToolsets, toolsetsFile: string): readonly Omit<Report, 'capability'>[] {
  const defined = typeof source.data === 'object' && source.data !== null && !Array.isArray(source.data) ? source.data : {};
  const { document, fm } = capability;
  const found: Omit<Report, 'capability'>[] = [];
  let ids: string[] | undefined;
  const near = didYouMeanEach(() => (ids ??= Object.keys(defined)));
  for (const field of ['requiredToolsets', 'optionalToolsets'] as const) {
    (fm[field] ?? []).forEach((toolset, index) => {
      if (Object.hasOwn(defined, toolset)) return;
      found.push({
        range: rangeForPath(document.frontmatter.ranges, `/${field}/${index}`, document.frontmatter.range),
        messageId: 'unknown',
        data: { toolset, field, toolsetsFile, hint: suggestionText(near(toolset)) },
        marks: [{ kind: 'toolset', id: toolset }],
        // An id of the wrong form is frontmatter-schema's finding.
        dependsOn: [fieldFact(capability, `/${field}/${index}`)],
      });
    });
  }
  return found.length > 0 ? found : NONE;
}
