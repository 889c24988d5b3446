// Read the registry as it is at a Git ref, straight from the object database: `ls-tree` lists the
// files, one `cat-file --batch` process streams every blob needed. Nothing is checked out and the
// working tree is never touched. Text files go through the same size, binary and UTF-8 checks as
// files read from disk.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { simpleGit, type SimpleGit } from 'simple-git';
import { isProtocolFile } from '../compiler/compile.js';
import { isEvalsFile } from '../compiler/evals/file.js';
import { didYouMean, editDistance } from '../compiler/did-you-mean.js';
import { MAX_FOLDER_DEPTH, pathDepth } from '../compiler/layout.js';
import { TOOLSETS_FOLDER, isToolsetsFile } from '../compiler/toolsets.js';
import type { RegistryInput, SourceFile } from '../compiler/types.js';
import { UsageError } from './context.js';
import { decodeTextFile, folderTooDeep } from './read-registry.js';

export type GitRegistryErrorCode = 'not-a-repository' | 'bad-ref' | 'unknown-ref' | 'shallow-clone' | 'git-failed';

/** A Git problem the user has to fix (exit 2); `code` says which. */
export class GitRegistryError extends UsageError {
  override name = 'GitRegistryError';
  constructor(
    readonly code: GitRegistryErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export interface GitRegistry {
  /** The full commit id the ref resolved to. */
  commit: string;
  input: RegistryInput;
}

interface TreeEntry {
  mode: string;
  oid: string;
  /** Relative to the registry root, `/` separators. */
  path: string;
}

const SYMLINK_MODE = '120000';
const SUBMODULE_MODE = '160000';

function gitMessage(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).trim().split('\n')[0] ?? '';
}

interface RepositoryState {
  /** The registry root's path inside the repository, `''` or ending in `/`. */
  prefix: string;
  shallow: boolean;
  /** The commit `ref` names, when it exists here. */
  commit: string | undefined;
}

/** One `git rev-parse` for everything the gate needs to know before reading: where, how deep, which commit. */
async function inspectRepository(git: SimpleGit, root: string, ref: string): Promise<RepositoryState> {
  let output: string;
  try {
    // With --quiet an unknown ref exits 1 without a message; simple-git then resolves with the other lines.
    output = await git.raw(['rev-parse', '--show-prefix', '--is-shallow-repository', '--verify', '--quiet', `${ref}^{commit}`]);
  } catch (error) {
    const message = gitMessage(error);
    if (/not a git repository/i.test(message)) {
      throw new GitRegistryError(
        'not-a-repository',
        `${root} is not inside a Git repository; capreg check reads the base registry from Git, so run it in a clone of the registry's repository`,
      );
    }
    throw new GitRegistryError('git-failed', `cannot run git in ${root}: ${message}`);
  }
  const [prefix = '', shallow = '', commit = ''] = output.split('\n').map((line) => line.trim());
  return { prefix, shallow: shallow === 'true', commit: /^[0-9a-f]{40,64}$/.test(commit) ? commit : undefined };
}

/** Refs read for suggestions: a repository with more is rare, and the edit distances stay cheap. */
const MAX_SUGGESTION_REFS = 5000;
const MAX_SUGGESTIONS = 3;
/** Longer names are not typed by hand; an edit distance is quadratic in the length. */
const MAX_SUGGESTION_LENGTH = 100;

/** The branch, tag and remote-branch names closest to a mistyped ref (plausible typos only, closest first). */
async function similarRefs(git: SimpleGit, ref: string): Promise<string[]> {
  if (ref.length > MAX_SUGGESTION_LENGTH) return [];
  const output = await git
    .raw(['for-each-ref', `--count=${MAX_SUGGESTION_REFS}`, '--format=%(refname:short)', 'refs/heads', 'refs/tags', 'refs/remotes'])
    .catch(() => '');
  const names = [...new Set(['HEAD', ...output.split('\n').map((line) => line.trim())])].filter(
    (name) => name !== '' && !name.endsWith('/HEAD') && name.length <= MAX_SUGGESTION_LENGTH,
  );
  const ranked = names
    .filter((name) => didYouMean(ref, [name]) !== undefined)
    .map((name) => ({ name, distance: editDistance(ref.toLowerCase(), name.toLowerCase()) }))
    .sort((a, b) => a.distance - b.distance || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  // Only names about as close as the closest: "main" is no suggestion for "maintenence" when "maintenance" is there.
  const best = ranked[0]?.distance ?? 0;
  return ranked
    .filter((entry) => entry.distance <= best + 1)
    .slice(0, MAX_SUGGESTIONS)
    .map((entry) => entry.name);
}

/** Explain how to get a ref that is not here (a shallow clone is the usual cause in CI, a typo the usual cause elsewhere). */
async function missingRefError(git: SimpleGit, ref: string, shallow: boolean): Promise<GitRegistryError> {
  const similar = await similarRefs(git, ref);
  const suggestion = similar.length > 0 ? `did you mean ${similar.map((name) => `"${name}"`).join(' or ')}? ` : '';
  const remotes = (await git.raw(['remote']).catch(() => '')).split('\n').filter(Boolean);
  const slash = ref.indexOf('/');
  const remote = slash > 0 && remotes.includes(ref.slice(0, slash)) ? ref.slice(0, slash) : undefined;
  const branch = ref.slice(slash + 1);
  // A single-branch clone (what a shallow clone is by default) does not track other branches, so a
  // plain `git fetch origin main` would not create origin/main: spell out the refspec.
  const refspec = `+refs/heads/${branch}:refs/remotes/${remote}/${branch}`;
  if (shallow) {
    const fetch = remote !== undefined ? `git fetch --unshallow ${remote} ${refspec}` : 'git fetch --unshallow';
    return new GitRegistryError(
      'shallow-clone',
      `cannot find "${ref}"${similar.length > 0 ? ` (${suggestion.trim()})` : ''}: this is a shallow clone and the base commit was not fetched. ` +
        `Fetch the history with \`${fetch}\`; in GitHub Actions, check out with \`actions/checkout\` and \`fetch-depth: 0\``,
    );
  }
  const hint =
    remote !== undefined
      ? `fetch it with \`git fetch ${remote} ${refspec}\``
      : 'check the name with `git branch -a` or `git log --oneline`, and fetch it if it lives on a remote';
  return new GitRegistryError(
    'unknown-ref',
    `unknown Git ref "${ref}": no commit by that name in this repository; ${suggestion}${similar.length > 0 ? 'Otherwise ' : ''}${hint}`,
  );
}

async function listTree(git: SimpleGit, commit: string, prefix: string): Promise<TreeEntry[]> {
  const base = `${prefix}capabilities/`;
  let output: string;
  try {
    output = await git.raw(['ls-tree', '-r', '-z', '--full-tree', commit, '--', `${prefix}capabilities`]);
  } catch (error) {
    throw new GitRegistryError('git-failed', `git ls-tree ${commit.slice(0, 12)} failed: ${gitMessage(error)}`);
  }
  const entries: TreeEntry[] = [];
  for (const record of output.split('\0')) {
    const tab = record.indexOf('\t');
    if (tab === -1) continue;
    const [mode, , oid] = record.slice(0, tab).split(' ');
    const fullPath = record.slice(tab + 1);
    if (!mode || !oid || !fullPath.startsWith(base) || mode === SUBMODULE_MODE) continue;
    const relative = fullPath.slice(prefix.length);
    // Like the disk reader: dot files and dot folders are not part of the registry.
    if (relative.split('/').some((segment) => segment.startsWith('.'))) continue;
    entries.push({ mode, oid, path: relative });
  }
  return entries;
}

/** Read blobs with one `git cat-file --batch` process; the result maps each oid to its bytes. */
export function readBlobs(cwd: string, oids: readonly string[]): Promise<Map<string, Buffer>> {
  const unique = [...new Set(oids)];
  if (unique.length === 0) return Promise.resolve(new Map<string, Buffer>());
  return new Promise((resolve, reject) => {
    const child = spawn('git', ['cat-file', '--batch'], { cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    child.once('error', (error) => reject(new GitRegistryError('git-failed', `cannot run git cat-file: ${error.message}`)));
    child.once('close', (code) => {
      if (code !== 0) {
        reject(new GitRegistryError('git-failed', `git cat-file --batch exited with code ${code}: ${stderr.trim()}`));
        return;
      }
      try {
        resolve(parseBatch(Buffer.concat(chunks)));
      } catch (error) {
        reject(error instanceof Error ? error : new GitRegistryError('git-failed', String(error)));
      }
    });
    child.stdin.on('error', () => {
      // An early exit shows up in 'close' with its stderr; the broken pipe itself adds nothing.
    });
    child.stdin.end(`${unique.join('\n')}\n`);
  });
}

/** `<oid> <type> <size>\n<content>\n` per object, or `<oid> missing\n`. */
function parseBatch(output: Buffer): Map<string, Buffer> {
  const blobs = new Map<string, Buffer>();
  let offset = 0;
  while (offset < output.length) {
    const newline = output.indexOf(10, offset);
    if (newline === -1) break;
    const header = output.toString('utf8', offset, newline).split(' ');
    offset = newline + 1;
    if (header[1] === 'missing' || header.length < 3) continue;
    const size = Number(header[2]);
    blobs.set(header[0]!, output.subarray(offset, offset + size));
    offset += size + 1;
  }
  return blobs;
}

function isTextInput(relative: string): boolean {
  return isToolsetsFile(relative) || isProtocolFile(relative) || isEvalsFile(relative);
}

/** Where a symbolic link stored in Git points, relative to the registry root, or undefined when outside `capabilities/`. */
function linkTarget(linkPath: string, target: string): string | undefined {
  if (path.posix.isAbsolute(target)) return undefined;
  const resolved = path.posix.normalize(path.posix.join(path.posix.dirname(linkPath), target));
  return resolved.startsWith('capabilities/') ? resolved : undefined;
}

/**
 * The registry under `root` as it is at `ref`, in the form the compiler takes. `root` may be a
 * subfolder of the repository: paths are taken relative to it.
 */
export async function readGitRegistry(root: string, ref: string, options: { maxFileBytes: number }): Promise<GitRegistry> {
  const base = await openGitBase(root, ref);
  return { commit: base.commit, input: await base.read(options) };
}

/** A ref that was found: its commit, and a reader for its registry. */
export interface GitBase {
  commit: string;
  read(options: { maxFileBytes: number }): Promise<RegistryInput>;
  /**
   * The files under `capabilities/` that Git sees differ between the commit and the working tree
   * (paths relative to the registry root), or undefined when git cannot say. A hint only: Git
   * compares after its filters (line endings), so callers still compare bytes.
   */
  changedPaths(): Promise<Set<string> | undefined>;
}

/**
 * Resolve `ref` (every problem the user must fix is thrown here, as a GitRegistryError) and return a
 * reader for the registry at that commit, so that callers can start reading next to other work.
 */
export async function openGitBase(root: string, ref: string): Promise<GitBase> {
  if (ref === '' || ref.startsWith('-')) throw new GitRegistryError('bad-ref', `--against "${ref}" is not a Git ref`);
  const git = simpleGit({ baseDir: root });
  const { prefix, shallow, commit } = await inspectRepository(git, root, ref);
  if (commit === undefined) throw await missingRefError(git, ref, shallow);
  return {
    commit,
    read: (options) => readTree({ git, root, ref, commit, prefix }, options),
    changedPaths: async () => {
      try {
        // --relative: paths relative to the registry root (the working directory), which may be a subfolder.
        const output = await git.raw(['diff', '--name-only', '-z', '--no-renames', '--relative', commit, '--', 'capabilities']);
        return new Set(output.split('\0').filter((line) => line !== ''));
      } catch {
        return undefined;
      }
    },
  };
}

async function readTree(
  { git, root, ref, commit, prefix }: { git: SimpleGit; root: string; ref: string; commit: string; prefix: string },
  options: { maxFileBytes: number },
): Promise<RegistryInput> {
  // As on disk (read-registry.ts): nothing in a folder nested deeper than the limit is read, and
  // each such folder is refused.
  const tooDeep = new Set<string>();
  const listed = await listTree(git, commit, prefix);
  const entries = listed.filter((entry) => {
    if (pathDepth(entry.path) <= MAX_FOLDER_DEPTH + 1) return true;
    tooDeep.add(entry.path.split('/', MAX_FOLDER_DEPTH + 2).join('/'));
    return false;
  });
  const byPath = new Map(entries.map((entry) => [entry.path, entry]));

  const textEntries = entries.filter((entry) => isTextInput(entry.path));
  const firstRead = await readBlobs(
    root,
    textEntries.map((entry) => entry.oid),
  );
  // A symbolic link is stored as a blob holding its target: follow it when it stays inside capabilities/.
  const targets = new Map<string, TreeEntry | undefined>();
  for (const entry of textEntries.filter((candidate) => candidate.mode === SYMLINK_MODE)) {
    const target = linkTarget(entry.path, firstRead.get(entry.oid)?.toString('utf8') ?? '');
    const resolved = target !== undefined ? byPath.get(target) : undefined;
    targets.set(entry.path, resolved && resolved.mode !== SYMLINK_MODE ? resolved : undefined);
  }
  const extraOids = [...targets.values()].filter((entry): entry is TreeEntry => entry !== undefined && !firstRead.has(entry.oid)).map((entry) => entry.oid);
  const blobs = extraOids.length > 0 ? new Map([...firstRead, ...(await readBlobs(root, extraOids))]) : firstRead;

  const files: SourceFile[] = [...tooDeep].map((folder) => ({ path: folder, problem: folderTooDeep(folder) }));
  for (const entry of textEntries) {
    let oid = entry.oid;
    if (entry.mode === SYMLINK_MODE) {
      const target = targets.get(entry.path);
      if (!target) {
        files.push({ path: entry.path, problem: `symbolic link at ${ref} points outside capabilities/ or to another link; refused` });
        continue;
      }
      oid = target.oid;
    }
    const bytes = blobs.get(oid);
    if (!bytes) throw new GitRegistryError('git-failed', `git object ${oid} (${entry.path} at ${ref}) is missing from the repository`);
    files.push({ path: entry.path, ...decodeTextFile(bytes, options.maxFileBytes) });
  }

  const allPaths = entries.map((entry) => entry.path).sort();
  const folders = new Set<string>();
  const protocolFolders = new Set<string>();
  for (const entry of listed) {
    const segments = entry.path.split('/');
    if (segments.length < 3) continue;
    const folder = segments.slice(0, 2).join('/');
    if (folder === TOOLSETS_FOLDER) continue;
    folders.add(folder);
    if (isProtocolFile(entry.path)) protocolFolders.add(folder);
  }
  return {
    files: files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)),
    allPaths,
    foldersWithoutProtocol: [...folders].filter((folder) => !protocolFolders.has(folder)).sort(),
  };
}
