// tools-table: the tools a protocol lists in its tools table exist in the capability's own toolsets
// (required + optional), and every tool of a required toolset is listed. The table is the agent's
// map of what it may call; a row for a tool it cannot have sends it to a call that fails, and a
// missing row leaves a tool undocumented.
import { didYouMeanEach, suggestionText } from '../did-you-mean.js';
import { findNameIn } from '../mentions.js';
import { ownToolsetFacts } from '../facts.js';
import { ruleDocsUrl, type LintCapability, type LintRegistry, type Report, type Rule } from '../rule.js';
import { rangeForPath } from '../yaml-source.js';

/** At most `limit` names in backticks, then "and N more". */
function listNames(names: readonly string[], limit = 5): string {
  const shown = names.slice(0, limit).map((name) => `\`${name}\``);
  const more = names.length - shown.length;
  return more > 0 ? `${shown.join(', ')} and ${more} more` : shown.join(', ');
}

export const toolsTable: Rule = {
  meta: {
    id: 'tools-table',
    description: "Tools in the protocol's tools table exist in its toolsets; tools of required toolsets are all listed.",
    defaultLevel: 'error',
    reads: 'document',
    docs: { url: ruleDocsUrl('tools-table') },
    defaultOptions: {},
    messages: {
      unknownTool: "tool `{{tool}}` is not defined in any toolset of {{toolsetsFile}}; list only tools of this capability's toolsets ({{own}}){{hint}}",
      foreignTool:
        'tool `{{tool}}` belongs to toolset {{owners}}, which this capability neither requires nor lists as optional ({{own}}); add {{owners}} to `optionalToolsets`, or remove the row and link the capability that owns the tool with a `capability:` link',
      omitted: 'the tools table has no row for {{tools}} of {{toolsets}}; add a row for each (write "not used here" if one is not for this protocol)',
      noTable: 'the protocol has no tools table; add a `## Tools` section with a table whose first header cell is `Tool`, listing {{tools}} of {{toolsets}}',
    },
  },
  check({ registry, report }) {
    // Without a usable toolsets.yaml every tool would look unknown; toolsets-schema reports the file.
    // With a toolsets file unread, the tools it defines are unknown, not undefined or foreign.
    if (!registry.toolsetsSource.present || registry.toolsetsSource.data === undefined || registry.toolsetsUnread) return;
    for (const capability of registry.capabilities) {
      // Without a well-typed `requiredToolsets` the capability's toolsets are unknown (frontmatter-schema reports it).
      if (capability.fm.requiredToolsets === undefined) continue;
      // The findings rest on the document (frontmatter included) and the toolsets (the tool owners
      // are derived from them and change with them).
      const findings = registry.derived.of(capability.document, 'tools-table', registry.toolsets, () => checkTable(capability, registry));
      // The toolsets file's name is filled in here, outside the kept findings; a template without it ignores it.
      for (const finding of findings) report({ ...finding, capability, data: { ...finding.data, toolsetsFile: registry.toolsetsFile } });
    }
  },
};

/** A diagnostic of one capability, before the capability is attached. */
type Finding = Omit<Report, 'capability'>;

/** The findings of one capability's tools tables: a function of its document (frontmatter included) and the toolsets. */
function checkTable(capability: LintCapability, registry: Pick<LintRegistry, 'toolsets' | 'toolOwners'>): Finding[] {
  const { document, fm } = capability;
  const findings: Finding[] = [];
  const requiredToolsets = fm.requiredToolsets ?? [];
  const own = [...new Set([...requiredToolsets, ...(fm.optionalToolsets ?? [])])].filter((id) => Object.hasOwn(registry.toolsets, id));
  const ownTools = new Set(own.flatMap((id) => Object.keys(registry.toolsets[id]?.tools ?? {})));
  const ownText = own.length > 0 ? own.join(', ') : 'it has none';
  const listed = new Set<string>();
  const rests = ownToolsetFacts(capability);
  const near = didYouMeanEach(() => (ownTools.size > 0 ? ownTools : registry.toolOwners.keys()));

  for (const table of document.toolsTables) {
    for (const row of table.rows) {
      listed.add(row.tool);
      if (ownTools.has(row.tool)) continue;
      const range = findNameIn(document, row.tool, row.range)?.range ?? row.range;
      const owners = registry.toolOwners.get(row.tool);
      if (owners && owners.length > 0) {
        findings.push({
          range,
          messageId: 'foreignTool',
          data: { tool: row.tool, owners: owners.join(', '), own: ownText },
          dependsOn: rests,
        });
      } else {
        findings.push({
          range,
          messageId: 'unknownTool',
          data: { tool: row.tool, own: ownText, hint: suggestionText(near(row.tool)) },
          // A tool whose definition is malformed is left out of the toolsets, so it looks undefined.
          dependsOn: [...rests, { kind: 'tool', name: row.tool }],
        });
      }
    }
  }

  // Lesser finding: tools of required toolsets the table omits.
  const omittedBy = new Map<string, string[]>();
  for (const id of new Set(requiredToolsets)) {
    for (const tool of Object.keys(registry.toolsets[id]?.tools ?? {})) {
      if (listed.has(tool)) continue;
      const toolsets = omittedBy.get(tool) ?? [];
      toolsets.push(id);
      omittedBy.set(tool, toolsets);
    }
  }
  if (omittedBy.size === 0) return findings;
  const tools = listNames([...omittedBy.keys()]);
  const ids = [...new Set([...omittedBy.values()].flat())];
  const toolsets = `required toolset${ids.length > 1 ? 's' : ''} ${ids.join(', ')}`;
  const firstTable = document.toolsTables[0];
  if (firstTable) {
    findings.push({ range: firstTable.range, messageId: 'omitted', data: { tools, toolsets }, severity: 'warning', dependsOn: rests });
  } else {
    findings.push({
      range: rangeForPath(document.frontmatter.ranges, '/requiredToolsets', document.frontmatter.range),
      messageId: 'noTable',
      data: { tools, toolsets },
      severity: 'warning',
      dependsOn: rests,
    });
  }
  return findings;
}
