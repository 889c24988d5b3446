// foreign-tools: a protocol names only tools of its own toolsets (required + optional). A tool that
// belongs only to other toolsets is another capability's business: its rules, states and
// prohibitions live in that capability's protocol, and the caller may not even hold its toolset.
// The protocol must link that capability (`capability:` link) and let the agent load it through the
// catalog, where visibility is checked.
//
// Mentions are whole-word, case-sensitive matches of tool names anywhere in the body (code included:
// see compiler/mentions.ts). Rows of the tools table are left to `tools-table`, and tools covered
// by `retiredTools` are left to `retired-tools` (forbidding a retired tool is the right thing to do).
import { NameIndex, findNames, isRetiredEntry, matchesRetiredEntry, type Mention } from '../mentions.js';
import { ownToolsetFacts } from '../facts.js';
import { ruleDocsUrl, type LintCapability, type Rule } from '../rule.js';

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
    // With a toolsets file unread, a tool's owners are not all known: it may belong to this capability's toolsets too.
    if (registry.toolOwners.size === 0 || registry.toolsetsUnread) return;
    // Which capabilities require (or, second best, list as optional) a toolset: registry-wide, so
    // outside the per-document facts, and built only when some protocol names a foreign tool.
    let owningMaps: [Map<string, Set<string>>, Map<string, Set<string>>] | undefined;
    // Owners (joined) -> the sorted ids of the capabilities that require them, and of those that list them as optional.
    const sortedUsers = new Map<string, [string[], string[]]>();
    const owningCapabilities = (owners: readonly string[], self: string): string[] => {
      const key = owners.join('\u0000');
      let users = sortedUsers.get(key);
      if (users === undefined) {
        const maps = (owningMaps ??= toolsetUsers(registry.capabilities));
        const sorted = (map: Map<string, Set<string>>): string[] => [...new Set(owners.flatMap((toolset) => [...(map.get(toolset) ?? [])]))].sort();
        users = [sorted(maps[0]), sorted(maps[1])];
        sortedUsers.set(key, users);
      }
      for (const ids of users) {
        const others = ids.filter((id) => id !== self);
        if (others.length > 0) return others;
      }
      return [];
    };

    // Kept with the tool owners: built once per set of toolsets, not once per lint.
    const toolNames = registry.derived.of(registry.toolOwners, 'foreign-tools:names', undefined, () => new NameIndex(registry.toolOwners.keys()));
    for (const capability of registry.capabilities) {
      // Without a well-typed `requiredToolsets` the capability's own toolsets are unknown.
      if (capability.fm.requiredToolsets === undefined) continue;
      // The mentions rest on the document (its frontmatter included) and the tool owners alone.
      const mentions = registry.derived.of(capability.document, 'foreign-tools', registry.toolOwners, () =>
        foreignMentions(capability, registry.toolOwners, toolNames),
      );
      for (const mention of mentions) {
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

/** Toolset -> ids of the capabilities that require it, and toolset -> ids of those that list it as optional. */
function toolsetUsers(capabilities: readonly LintCapability[]): [Map<string, Set<string>>, Map<string, Set<string>>] {
  const requiredBy = new Map<string, Set<string>>();
  const optionalBy = new Map<string, Set<string>>();
  const add = (map: Map<string, Set<string>>, toolset: string, id: string): void => {
    const ids = map.get(toolset) ?? new Set<string>();
    ids.add(id);
    map.set(toolset, ids);
  };
  for (const capability of capabilities) {
    for (const toolset of capability.fm.requiredToolsets ?? []) add(requiredBy, toolset, capability.id);
    for (const toolset of capability.fm.optionalToolsets ?? []) add(optionalBy, toolset, capability.id);
  }
  return [requiredBy, optionalBy];
}

/**
 * The mentions of foreign tools in one protocol, tools-table rows and retired tools left out: a
 * function of the document (its body, tables and frontmatter) and the tool owners only (`toolNames`
 * is their names).
 */
function foreignMentions(capability: LintCapability, toolOwners: ReadonlyMap<string, readonly string[]>, toolNames: NameIndex): Mention[] {
  const { document, fm } = capability;
  const own = new Set([...(fm.requiredToolsets ?? []), ...(fm.optionalToolsets ?? [])]);
  const retired = (fm.retiredTools ?? []).filter(isRetiredEntry);
  const tableRows = new Set(document.toolsTables.flatMap((table) => table.rows.map((row) => `${row.range.line}\u0000${row.tool}`)));
  const isForeign = (candidate: string): boolean => {
    const owners = toolOwners.get(candidate);
    return owners !== undefined && !owners.some((toolset) => own.has(toolset)) && !retired.some((entry) => matchesRetiredEntry(candidate, entry));
  };
  return findNames(document, toolNames, isForeign).filter((mention) => !tableRows.has(`${mention.range.line}\u0000${mention.name}`));
}
