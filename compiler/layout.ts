// Where a registry keeps its files, relative to the registry root. Its own module, free of imports,
// so `capreg new` can name the files without loading the parser.
export const TOOLSETS_FILE = 'capabilities/toolsets.yaml';
/** The configuration, at the registry root. */
export const CONFIG_FILE = 'capreg.config.yaml';
/** Names a configuration is easily saved under that capreg does not read: each one stops a command (cli/load-config.ts). */
export const CONFIG_NEAR_MISSES = ['capreg.config.yml', 'capreg.config.json', 'capreg.yaml', 'capreg.yml'];
/** The split layout: one or more toolsets per `capabilities/toolsets/<name>.yaml`, next to or instead of TOOLSETS_FILE. */
export const TOOLSETS_FOLDER = 'capabilities/toolsets';

/**
 * How many folder levels a registry may nest under `capabilities/`: a capability's own folder is
 * level 1, its `references/` level 2. Readers refuse a folder deeper than this (registry-files
 * reports it) rather than walk it: a tree nested thousands of levels deep would otherwise end
 * the walk with a path too long for the file system.
 */
export const MAX_FOLDER_DEPTH = 16;

/** The level of a path under `capabilities/`: 1 for `capabilities/<id>`, 2 for a file or folder directly in it. */
export function pathDepth(relativePath: string): number {
  let depth = 0;
  for (let index = relativePath.indexOf('/'); index !== -1; index = relativePath.indexOf('/', index + 1)) depth += 1;
  return depth;
}

/** Whether a `/`-separated path passes through a hidden file or folder, which is never part of a registry. */
export function isHiddenPath(relativePath: string): boolean {
  return relativePath.split('/').some((segment) => segment.startsWith('.'));
}

/** Whether a path is under TOOLSETS_FOLDER, which holds toolsets files: never a capability's folder. */
export function isInToolsetsFolder(path: string): boolean {
  return path.startsWith(`${TOOLSETS_FOLDER}/`);
}

/**
 * A path whose refusal leaves toolsets unread: a toolsets file, or the toolsets folder itself (on
 * disk as the folder; at a Git ref, a link there Git cannot follow is refused as the
 * `PROTOCOL.md` its folder would hold). A refused subfolder is not one: no toolsets are read there.
 */
export function isToolsetsPath(path: string): boolean {
  return isToolsetsFile(path) || path === TOOLSETS_FOLDER || path === `${TOOLSETS_FOLDER}/PROTOCOL.md`;
}

/** `capabilities/toolsets.yaml` or `capabilities/toolsets/<name>.yaml`. */
export function isToolsetsFile(path: string): boolean {
  return path === TOOLSETS_FILE || (isInToolsetsFolder(path) && /^[^/]+\.yaml$/.test(path.slice(TOOLSETS_FOLDER.length + 1)));
}

/** A PROTOCOL.md (in any case) right in TOOLSETS_FOLDER: not a capability (registry-files refuses it). */
export function isToolsetsFolderProtocol(path: string): boolean {
  return path.toLowerCase() === `${TOOLSETS_FOLDER}/protocol.md`;
}

/** `capabilities/<id>/evals.yaml`: a capability's evals file (`capabilities/toolsets/evals.yaml` is a toolsets file). */
export function isEvalsFile(path: string): boolean {
  return /^capabilities\/[^/]+\/evals\.yaml$/.test(path) && !isInToolsetsFolder(path);
}

/** The files the compiler reads as text: the protocols, the evals files and the toolsets files. */
export function isTextInput(path: string): boolean {
  return isToolsetsFile(path) || isProtocolFile(path) || isEvalsFile(path);
}

/** `capabilities/<id>/PROTOCOL.md`: a capability's protocol. */
export function isProtocolFile(path: string): boolean {
  return /^capabilities\/[^/]+\/PROTOCOL\.md$/.test(path) && !isInToolsetsFolder(path);
}
