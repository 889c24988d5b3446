// toolset-exists: every toolset named in `requiredToolsets` / `optionalToolsets` is defined in
// capabilities/toolsets.yaml; a typo would otherwise hide a capability from every caller.
import { suggestion } from '../did-you-mean.js';
import { fieldFact } from '../facts.js';
import { ruleDocsUrl, type Rule } from '../rule.js';
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
    if (!source.present || source.problems.length > 0) return;
    const defined = typeof source.data === 'object' && source.data !== null && !Array.isArray(source.data) ? source.data : {};
    const known = Object.keys(defined);
    for (const capability of registry.capabilities) {
      const { document, fm } = capability;
      for (const field of ['requiredToolsets', 'optionalToolsets'] as const) {
        (fm[field] ?? []).forEach((toolset, index) => {
          if (Object.hasOwn(defined, toolset)) return;
          report({
            capability,
            range: rangeForPath(document.frontmatter.ranges, `/${field}/${index}`, document.frontmatter.range),
            messageId: 'unknown',
            data: { toolset, field, toolsetsFile: registry.toolsetsFile, hint: suggestion(toolset, known) },
            marks: [{ kind: 'toolset', id: toolset }],
            // An id of the wrong form is frontmatter-schema's finding.
            dependsOn: [fieldFact(capability, `/${field}/${index}`)],
          });
        });
      }
    }
  },
};
