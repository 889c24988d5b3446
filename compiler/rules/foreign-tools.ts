// foreign-tools: a protocol names only tools of its own toolsets (required + optional). A tool that
// belongs only to other toolsets is another capability's business: its rules, states and
// prohibitions live in that capability's protocol, and the caller may not even hold its toolset.
// The protocol must link that capability (`capability:` link) and let the agent load it through the
// catalog, where visibility is checked.
//
// Mentions are whole-word, case-sensitive matches of tool names anywhere in the body (code included:
// see compiler/mentions.ts). Rows of the tools table are left to `tools-table`, and tools covered
// by `retiredTools` are left to `retired-tools` (forbidding a retired tool is the right thing to do).
import { NameIndex, findNames, isRetiredEntry, matchesRetiredEntry } from '../mentions.js';
import { ownToolsetFacts } from '../facts.js';
import { ruleDocsUrl, type Rule } from '../rule.js';

export const foreignTools: Rule = {
  meta: {
    id: 'foreign-tools',
    description: 'The protocol names no tool that belongs only to toolsets outside its required and optional toolsets.',
    defaultLevel: 'error',
    reads: 'document',
    docs: { url: ruleDocsUrl('foreign-tools') },
    defaultOptions: {},
    messages: {
      foreignOwned:
        'tool `{{tool}}` belongs to toolset {{owners}}, which this capability neither requires nor lists as optional; do not name it here: link the capability that owns it, {{links}}, and let that protocol say how to use it',
      foreignUnowned:
        'tool `{{tool}}` belongs to toolset {{owners}}, which this capability neither requires nor lists as optional; do not name it here: link the capability that uses that toolset with a `capability:` link (none requires it yet), or add {{owners}} to `optionalToolsets`',
    },
  },
  check({ registry, report }) {
    if (registry.toolOwners.size === 0) return;
    const toolNames = new NameIndex(registry.toolOwners.keys());
    // Toolset -> ids of the capabilities that require it (or, second best, list it as optional).
    const requiredBy = new Map<string, Set<string>>();
    const optionalBy = new Map<string, Set<string>>();
    const add = (map: Map<string, Set<string>>, toolset: string, id: string): void => {
      const ids = map.get(toolset) ?? new Set<string>();
      ids.add(id);
      map.set(toolset, ids);
    };
    for (const capability of registry.capabilities) {
      for (const toolset of capability.fm.requiredToolsets ?? []) add(requiredBy, toolset, capability.id);
      for (const toolset of capability.fm.optionalToolsets ?? []) add(optionalBy, toolset, capability.id);
    }
    const owningCapabilities = (owners: readonly string[], self: string): string[] => {
      for (const map of [requiredBy, optionalBy]) {
        const ids = new Set(owners.flatMap((toolset) => [...(map.get(toolset) ?? [])]));
        ids.delete(self);
        if (ids.size > 0) return [...ids].sort();
      }
      return [];
    };

    for (const capability of registry.capabilities) {
      const { document, fm } = capability;
      // Without a well-typed `requiredToolsets` the capability's own toolsets are unknown.
      if (fm.requiredToolsets === undefined) continue;
      const own = new Set([...fm.requiredToolsets, ...(fm.optionalToolsets ?? [])]);
      const retired = (fm.retiredTools ?? []).filter(isRetiredEntry);
      const tableRows = new Set(document.toolsTables.flatMap((table) => table.rows.map((row) => `${row.range.line}\u0000${row.tool}`)));
      const isForeign = (candidate: string): boolean => {
        const owners = registry.toolOwners.get(candidate);
        return owners !== undefined && !owners.some((toolset) => own.has(toolset)) && !retired.some((entry) => matchesRetiredEntry(candidate, entry));
      };
      for (const mention of findNames(document, toolNames, isForeign)) {
        if (tableRows.has(`${mention.range.line}\u0000${mention.name}`)) continue;
        const owners = registry.toolOwners.get(mention.name) ?? [];
        const owning = owningCapabilities(owners, capability.id);
        const data = { tool: mention.name, owners: owners.join(', ') };
        const dependsOn = ownToolsetFacts(capability);
        if (owning.length > 0) {
          const links = owning
            .slice(0, 3)
            .map((id) => `[${id}](capability:${id})`)
            .join(' or ');
          report({ capability, range: mention.range, messageId: 'foreignOwned', data: { ...data, links }, dependsOn });
        } else {
          report({ capability, range: mention.range, messageId: 'foreignUnowned', data, dependsOn });
        }
      }
    }
  },
};
