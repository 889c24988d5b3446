// id-matches-folder: a capability's `id` equals the name of its folder, so paths and ids never diverge.
import { ruleDocsUrl, type Rule } from '../rule.js';
import type { Range } from '../types.js';
import { rangeForPath } from '../yaml-source.js';

export const idMatchesFolder: Rule = {
  meta: {
    id: 'id-matches-folder',
    description: 'The frontmatter `id` equals the capability folder name.',
    defaultLevel: 'error',
    reads: 'git',
    docs: { url: ruleDocsUrl('id-matches-folder') },
    defaultOptions: {},
    messages: {
      mismatch: 'id "{{id}}" does not match its folder "{{folder}}"; rename the folder or set `id: {{folder}}`',
      duplicate: 'id "{{id}}" is also used by {{other}}; capability ids must be unique',
    },
  },
  check({ registry, report }) {
    // As many ids as capabilities: no two share one, and no Map of them is needed (~10 ms at 10,000).
    const distinct = registry.byId.size === registry.capabilities.length;
    const firstWithId = new Map<string, string>();
    for (const capability of registry.capabilities) {
      const { document, fm } = capability;
      if (fm.id === undefined) continue;
      const range = (): Range => rangeForPath(document.frontmatter.ranges, '/id', document.frontmatter.range);
      if (fm.id !== document.folder) {
        report({ capability, range: range(), messageId: 'mismatch', data: { id: fm.id, folder: document.folder } });
      }
      if (distinct) continue;
      const other = firstWithId.get(fm.id);
      if (other !== undefined) report({ capability, range: range(), messageId: 'duplicate', data: { id: fm.id, other } });
      else firstWithId.set(fm.id, document.file);
    }
  },
};
