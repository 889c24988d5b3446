// registry-files: the registry's files can be read: every capability folder has a PROTOCOL.md, no
// file is binary, over the size limit, not UTF-8 or a link out of the root, and there is at least
// one capability.
import { FILE_START, pointRange } from '../positions.js';
import { ruleDocsUrl, type Rule } from '../rule.js';

export const registryFiles: Rule = {
  meta: {
    id: 'registry-files',
    description: 'Capability folders hold a readable PROTOCOL.md and the registry is not empty.',
    defaultLevel: 'error',
    reads: 'git',
    docs: { url: ruleDocsUrl('registry-files') },
    defaultOptions: {},
    messages: {
      refused: '{{problem}}',
      noProtocol: 'folder {{folder}} has no PROTOCOL.md; add one (`capreg new <id>` scaffolds it) or remove the folder',
      empty: 'the registry has no capabilities: add capabilities/<id>/PROTOCOL.md (`capreg new <id>` scaffolds one)',
    },
  },
  check({ registry, report }) {
    for (const file of registry.refusedFiles) {
      const range = file.problemAt ? pointRange(file.problemAt.line, file.problemAt.column) : FILE_START;
      report({ file: file.path, range, messageId: 'refused', data: { problem: file.problem ?? 'file cannot be read' } });
    }
    for (const folder of registry.foldersWithoutProtocol) {
      report({ file: folder, range: FILE_START, messageId: 'noProtocol', data: { folder } });
    }
    const refusedProtocols = registry.refusedFiles.filter((file) => file.path.endsWith('/PROTOCOL.md')).length;
    if (registry.capabilities.length === 0 && registry.foldersWithoutProtocol.length === 0 && refusedProtocols === 0) {
      report({ file: 'capabilities', range: FILE_START, messageId: 'empty' });
    }
  },
};
