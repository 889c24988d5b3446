// user-tool-bindings: each `toolBindings` entry names a capability the workflow actually links to,
// and every bound tool belongs to a toolset (required or optional) of that capability.
import { suggestion } from '../../did-you-mean.js';
import { CAPABILITY_SCHEME, linkedCapabilities } from '../../contract.js';
import { ruleDocsUrl, type Rule } from '../../rule.js';
import { rangeForPath } from '../../yaml-source.js';

export const userToolBindings: Rule = {
  meta: {
    id: 'user-tool-bindings',
    description: 'Tool bindings point at linked capabilities and at tools of their toolsets.',
    defaultLevel: 'error',
    reads: 'catalog',
    docs: { url: ruleDocsUrl('user-tool-bindings') },
    defaultOptions: {},
    messages: {
      notLinked: `step "{{step}}" binds tools of "{{id}}", but the workflow has no [{{id}}](${CAPABILITY_SCHEME}{{id}}) link; link it or remove the binding`,
      foreignTool: 'tool "{{tool}}" of step "{{step}}" is not in the toolsets of "{{id}}" ({{toolsets}}){{hint}}',
    },
  },
  check({ registry, report }) {
    for (const capability of registry.capabilities) {
      const { document } = capability;
      const bindings = document.frontmatter.data?.toolBindings;
      if (!Array.isArray(bindings)) continue;
      const linked = new Set(linkedCapabilities(document.links));
      bindings.forEach((binding: unknown, index) => {
        if (typeof binding !== 'object' || binding === null) return;
        const { step, capability: id, tools } = binding as { step?: unknown; capability?: unknown; tools?: unknown };
        if (typeof id !== 'string' || typeof step !== 'string') return;
        const at = (path: string) => rangeForPath(document.frontmatter.ranges, `/toolBindings/${index}${path}`, document.frontmatter.range);
        if (!linked.has(id)) {
          report({ capability, range: at('/capability'), messageId: 'notLinked', data: { step, id } });
          return;
        }
        const target = registry.byId.get(id);
        if (!target || !Array.isArray(tools)) return;
        const toolsets = [...(target.fm.requiredToolsets ?? []), ...(target.fm.optionalToolsets ?? [])];
        const available = new Set(toolsets.flatMap((toolset) => Object.keys(registry.toolsets[toolset]?.tools ?? {})));
        tools.forEach((tool, toolIndex) => {
          if (typeof tool !== 'string' || available.has(tool)) return;
          report({
            capability,
            range: at(`/tools/${toolIndex}`),
            messageId: 'foreignTool',
            data: { tool, step, id, toolsets: toolsets.join(', ') || 'none', hint: suggestion(tool, available) },
          });
        });
      });
    }
  },
};
