// capreg new <id>: scaffold capabilities/<id>/PROTOCOL.md that passes lint.
// Imports nothing of the parser or the rules: scaffolding is a couple of file writes and should take
// a node start-up, not a compiler load.
import type { Stats } from 'node:fs';
import { lstat, mkdir, readdir, realpath, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isToolsetsFile, TOOLSETS_FILE, TOOLSETS_FOLDER } from '../../compiler/layout.js';
import { CAPABILITY_ID_PATTERN, scaffoldProtocol } from '../../compiler/scaffold.js';
import { parseFlags } from '../command-table.js';
import { UsageError, type Command } from '../context.js';
import { linkRefusal } from '../link-refusal.js';
import { builtAtFrom } from '../options.js';
import { findRegistryRoot } from '../root.js';

const EMPTY_TOOLSETS = `# Toolsets of this registry: <toolset-id>: {description, tools: {<tool>: {action, description, states}}}.
{}
`;

export const newCommand: Command = async (argv, context) => {
  const { values, positionals } = parseFlags('new', argv);
  const [id, ...extra] = positionals;
  if (id === undefined || extra.length > 0) throw new UsageError('usage: capreg new <id> [--root DIR]');
  if (!CAPABILITY_ID_PATTERN.test(id) || id.length > 64) {
    throw new UsageError(`"${id}" is not a valid capability id: use lowercase letters and digits in words joined by single hyphens, at most 64 characters`);
  }
  if (`capabilities/${id}` === TOOLSETS_FOLDER) {
    throw new UsageError(`"${id}" cannot be a capability id: ${TOOLSETS_FOLDER}/ holds split toolsets files; choose another id`);
  }
  const root = findRegistryRoot(context.cwd, values.root);
  const today = (builtAtFrom(context.env) ?? new Date().toISOString()).slice(0, 10);
  const folder = await capabilityFolder(root, id);
  // 'wx' creates the file or fails: it never follows a link (or opens a FIFO) already there.
  const schema = await schemaReference(root, folder);
  if (!(await create(path.join(folder, 'PROTOCOL.md'), `capabilities/${id}/PROTOCOL.md`, scaffoldProtocol(id, today, schema)))) {
    throw new UsageError(`capabilities/${id}/PROTOCOL.md already exists`);
  }
  context.stdout(`created capabilities/${id}/PROTOCOL.md\n`);
  // A registry without toolsets fails lint; a fresh registry gets an empty toolsets.yaml so the
  // scaffold passes as promised. One that keeps them split in capabilities/toolsets/ has them.
  if (!(await hasSplitToolsets(root)) && (await create(path.join(root, TOOLSETS_FILE), TOOLSETS_FILE, EMPTY_TOOLSETS))) {
    context.stdout(`created ${TOOLSETS_FILE} (no toolsets yet)\n`);
  }
  context.stdout('next: fill it in, then run `capreg lint`\n');
  return 0;
};

/**
 * The folder to write capabilities/<id>/PROTOCOL.md in, made when missing. What is in the way is a
 * usage error, and a link is followed only on the terms of the registry reader (inside the root,
 * not hidden): the scaffold must not land where `capreg lint` refuses to look.
 */
async function capabilityFolder(root: string, id: string): Promise<string> {
  const folder = path.join(root, 'capabilities', id);
  const realRoot = await realpath(root);
  const capabilities = linkRefusal(realRoot, await realpath(path.join(root, 'capabilities')), 'folder');
  if (capabilities !== undefined) throw new UsageError(`capabilities/: ${capabilities}`);
  let info: Stats;
  try {
    info = await lstat(folder);
  } catch (error) {
    if (errorCode(error) !== 'ENOENT') throw new UsageError(`cannot read capabilities/${id}: ${errorCode(error)}`);
    try {
      await mkdir(folder);
    } catch (mkdirError) {
      throw new UsageError(`cannot create capabilities/${id}/: ${errorCode(mkdirError)}`);
    }
    return folder;
  }
  if (info.isSymbolicLink()) {
    let target: string;
    try {
      target = await realpath(folder);
    } catch {
      throw new UsageError(`capabilities/${id} is a broken symbolic link: its target does not exist; remove it or choose another id`);
    }
    const refusal = linkRefusal(realRoot, target, 'folder');
    if (refusal !== undefined) throw new UsageError(`capabilities/${id}: ${refusal}`);
    info = await stat(target);
  }
  if (!info.isDirectory()) throw new UsageError(`capabilities/${id} exists and is not a folder (${kindOf(info)}); remove it or choose another id`);
  return folder;
}

/**
 * The capability schema of this capreg: the committed copy in a checkout of capreg (running from
 * lib/ or from the sources), else the one the package ships in lib/.
 */
const SHIPPED_SCHEMAS = ['../../../compiler/schema/capability.schema.json', '../../compiler/schema/capability.schema.json'].map((relative) =>
  fileURLToPath(new URL(relative, import.meta.url)),
);

/** The path from the new capability's folder to the schema, when it can be committed (see {@link portableSchemaPath}). */
async function schemaReference(root: string, folder: string): Promise<string | undefined> {
  for (const candidate of SHIPPED_SCHEMAS) {
    try {
      return portableSchemaPath(await realpath(root), await realpath(folder), await realpath(candidate));
    } catch {
      // not at this location: try the next
    }
  }
  return undefined;
}

/**
 * `schema` relative to `folder` (POSIX separators), when the path holds for everyone who clones the
 * registry: the schema is inside the registry root (capreg's own repository), or in a
 * `node_modules/` folder of the root or of a folder above it (capreg installed as a dependency of
 * the repository or of its workspace). A capreg run from elsewhere (a global install, npx's cache)
 * gets undefined: a path into one machine's folders does not belong in a committed file.
 */
export function portableSchemaPath(root: string, folder: string, schema: string): string | undefined {
  const inside = (parent: string) => schema.startsWith(parent.endsWith(path.sep) ? parent : `${parent}${path.sep}`);
  let portable = inside(root);
  for (let above = root; !portable; above = path.dirname(above)) {
    portable = inside(path.join(above, 'node_modules'));
    if (path.dirname(above) === above) break;
  }
  return portable ? path.relative(folder, schema).split(path.sep).join('/') : undefined;
}

/** Whether capabilities/toolsets/ holds a toolsets file (`*.yaml`): the registry uses the split layout. */
async function hasSplitToolsets(root: string): Promise<boolean> {
  try {
    return (await readdir(path.join(root, TOOLSETS_FOLDER))).some((name) => !name.startsWith('.') && isToolsetsFile(`${TOOLSETS_FOLDER}/${name}`));
  } catch {
    return false;
  }
}

/** Writes a new file; false when something of that name is already there. */
async function create(file: string, name: string, text: string): Promise<boolean> {
  try {
    await writeFile(file, text, { flag: 'wx' });
    return true;
  } catch (error) {
    if (errorCode(error) === 'EEXIST') return false;
    throw new UsageError(`cannot create ${name}: ${errorCode(error)}`);
  }
}

function kindOf(info: Stats): string {
  if (info.isFile()) return 'a file';
  if (info.isFIFO()) return 'a FIFO';
  if (info.isSocket()) return 'a socket';
  return 'a device';
}

function errorCode(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? (error as Error).message;
}
