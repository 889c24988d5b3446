// registry-files: the registry's files can be read: every capability folder has a PROTOCOL.md, no
// file is binary, over the size limit, not UTF-8 or a link out of the root, and there is at least
// one capability. A file named nearly as one capreg reads (`evals.yml`, `toolsets/x.yml`, a
// `protocol.md`) is a warning: it is not read, and skipping it without a word would hide that.
import {
  isEvalsFile,
  isInToolsetsFolder,
  isProtocolFile,
  isToolsetsFile,
  isToolsetsFolderProtocol,
  pathDepth,
  TOOLSETS_FILE,
  TOOLSETS_FOLDER,
} from '../layout.js';
import { FILE_START, pointRange } from '../positions.js';
import { ruleDocsUrl, type Rule } from '../rule.js';

/** What capreg reads in place of `path`, a file it does not read whose name is nearly that; undefined for any other file. */
export function readInstead(path: string): string | undefined {
  if (isProtocolFile(path) || isEvalsFile(path) || isToolsetsFile(path)) return undefined;
  const slash = path.lastIndexOf('/');
  const folder = path.slice(0, slash);
  const name = path.slice(slash + 1).toLowerCase();
  if (name === 'protocol.md' && pathDepth(path) === 2 && !isInToolsetsFolder(path)) return `${folder}/PROTOCOL.md`;
  if (isInToolsetsFolder(path) && /\.(ya?ml|json)$/.test(name)) {
    // Only the files right in capabilities/toolsets/ are read: one in a folder below it is moved up.
    return `${TOOLSETS_FOLDER}/${path.slice(slash + 1).replace(/\.[^.]+$/, '')}.yaml`;
  }
  if (folder === 'capabilities' && /^toolsets\.(ya?ml|json)$/.test(name)) return TOOLSETS_FILE;
  if (pathDepth(path) === 2 && /^evals\.(ya?ml|json)$/.test(name)) return `${folder}/evals.yaml`;
  return undefined;
}

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
      notRead: 'capreg does not read this file: it reads {{instead}}; rename it, or remove it',
      toolsetsProtocol:
        '{{folder}}/ holds toolsets files, not a capability, so this file is not read; move the capability to a folder of its own, capabilities/<id>/',
      nestedProtocol:
        'a PROTOCOL.md below a capability folder is not a capability and is not read: only capabilities/<id>/PROTOCOL.md is; move it there, or give it another name if it is a reference',
    },
  },
  check({ registry, report }) {
    for (const file of registry.refusedFiles) {
      const range = file.problemAt ? pointRange(file.problemAt.line, file.problemAt.column) : FILE_START;
      // A toolsets file not read leaves the toolsets unknown: what rests on them is not reported as wrong.
      const marks = isToolsetsFile(file.path) ? [{ kind: 'toolsets-file' as const }] : [];
      report({ file: file.path, range, messageId: 'refused', data: { problem: file.problem ?? 'file cannot be read' }, marks });
    }
    for (const folder of registry.foldersWithoutProtocol) {
      report({ file: folder, range: FILE_START, messageId: 'noProtocol', data: { folder } });
    }
    for (const path of registry.allPaths) {
      const instead = readInstead(path);
      if (instead !== undefined) report({ file: path, range: FILE_START, messageId: 'notRead', severity: 'warning', data: { instead } });
      else if (isToolsetsFolderProtocol(path)) report({ file: path, range: FILE_START, messageId: 'toolsetsProtocol', data: { folder: TOOLSETS_FOLDER } });
      else if (pathDepth(path) > 2 && path.toLowerCase().endsWith('/protocol.md'))
        report({ file: path, range: FILE_START, messageId: 'nestedProtocol', severity: 'warning' });
    }
    const refusedProtocols = registry.refusedFiles.filter((file) => isProtocolFile(file.path)).length;
    if (registry.capabilities.length === 0 && registry.foldersWithoutProtocol.length === 0 && refusedProtocols === 0) {
      report({ file: 'capabilities', range: FILE_START, messageId: 'empty' });
    }
  },
};
