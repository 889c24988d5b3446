// toolset-exists: every toolset named in `requiredToolsets` / `optionalToolsets` is defined in
// capabilities/toolsets.yaml; a typo would otherwise hide a capability from every caller.
import { suggestion } from '../did-you-mean.js';
import type { Rule } from '../rule.js';
import { rangeForPath } from '../yaml-source.js';

export const toolsetExists: Rule = {
  meta: {
    id: 'toolset-exists',
    description: 'Every toolset id in the frontmatter exists in toolsets.yaml.',
    defaultLevel: 'error',
    defaultOptions: {},
    messages: {
      unknown: 'toolset "{{toolset}}" in `{{field}}` is not defined in {{toolsetsFile}}{{hint}}',
    },
  },
  check({ registry, report }) {
    const known = Object.keys(registry.toolsets);
    for (const capability of registry.capabilities) {
      const { document, fm } = capability;
      for (const field of ['requiredToolsets', 'optionalToolsets'] as const) {
        (fm[field] ?? []).forEach((toolset, index) => {
          if (Object.hasOwn(registry.toolsets, toolset)) return;
          report({
            capability,
            range: rangeForPath(document.frontmatter.ranges, `/${field}/${index}`, document.frontmatter.range),
            messageId: 'unknown',
            data: { toolset, field, toolsetsFile: registry.toolsetsFile, hint: suggestion(toolset, known) },
          });
        });
      }
    }
  },
};
