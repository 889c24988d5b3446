// Read the registry as it is at a Git ref, straight from the object database: `ls-tree` lists the
// files with their sizes, one `cat-file --batch` process streams every blob needed (none over the
// size limit is fetched). Nothing is checked out and the working tree is never touched. Text files
// go through the same size, binary and UTF-8 checks as files read from disk.
import { spawn } from 'node:child_process';
import { lstatSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { simpleGit, type SimpleGit } from 'simple-git';
import { didYouMean, editDistance } from '../compiler/did-you-mean.js';
import { isHiddenPath, isProtocolFile, isTextInput, MAX_FOLDER_DEPTH, pathDepth } from '../compiler/layout.js';
import { LIMITS } from '../compiler/limits.js';
import { TOOLSETS_FOLDER } from '../compiler/toolsets.js';
import type { RegistryInput, SourceFile } from '../compiler/types.js';
import { UsageError } from './context.js';
import { GIT_CONFIG, GIT_CONFIG_ARGS, GIT_ENV, GIT_IDLE_SECONDS } from './git-config.js';
import { decodeTextFile, folderTooDeep, RegistryBudget, sizeProblem, type ReadOptions } from './read-registry.js';
import { searchSorted } from './sorted.js';
import { byCodeUnits, byKey } from '../compiler/order.js';

export type GitRegistryErrorCode = 'not-a-repository' | 'bad-ref' | 'unknown-ref' | 'shallow-clone' | 'bad-tree' | 'linked-root' | 'git-failed' | 'git-timeout';

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
  /** In bytes, from `ls-tree -l`: known before the blob is read. */
  size: number;
  /** Relative to the registry root, `/` separators. */
  path: string;
  /** Where it really is, when it was read through a folder link (`path` is then under the link). */
  source?: string;
}

const SYMLINK_MODE = '120000';
/** A link's target is a path: longer than any system's PATH_MAX, it is no link Git would write. */
const MAX_LINK_BYTES = 4096;

function gitMessage(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).trim().split('\n')[0] ?? '';
}

interface GitResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Where the gate runs git, and how long a git process may go without output before it is stopped. */
interface GitAt {
  cwd: string;
  idleMs: number;
}

/**
 * Start git in `at.cwd` with the settings every capreg git command gets (git-config.ts), `input` on
 * its stdin. `ended` settles with its exit code, or is rejected when it cannot start or when it has
 * written nothing to stdout or stderr for `at.idleMs`: it is then killed and its pipes closed, so
 * that neither it nor a process it started (a lazy fetch, a credential helper) holds the gate.
 */
function spawnGit(at: GitAt, args: readonly string[], input = '') {
  const child = spawn('git', [...GIT_CONFIG_ARGS, ...args], { cwd: at.cwd, stdio: 'pipe', env: { ...process.env, ...GIT_ENV } });
  child.stdin.on('error', () => {
    // An early exit shows up in its exit code with its stderr; the broken pipe itself adds nothing.
  });
  child.stdin.end(input);
  const ended = new Promise<number | null>((resolve, reject) => {
    let heard = false;
    // The timer comes due as well when this thread was busy for that long (compiling the new tree)
    // while git's output, or its end, waited to be read: that is read first (an immediate runs after
    // the loop's I/O), and only a git that still gave neither is stopped.
    const timer = setTimeout(() => {
      heard = false;
      setImmediate(() => {
        if (heard) return;
        child.stdout.destroy();
        child.stderr.destroy();
        // Git ended and all it wrote was read: a process it started holds its pipes (a hook's), and its answer stands.
        if (child.exitCode !== null || child.signalCode !== null) return;
        child.kill('SIGKILL');
        reject(silentGit(args, at.idleMs));
      });
    }, at.idleMs);
    const alive = (): void => {
      heard = true;
      timer.refresh();
    };
    child.stdout.on('data', alive);
    child.stderr.on('data', alive);
    // Its pipes close after this, unless a process it started holds them: they are closed idleMs later.
    child.once('exit', alive);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(new GitRegistryError('git-failed', `cannot run git in ${at.cwd}: ${error.message}`));
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
  return { child, ended };
}

function silentGit(args: readonly string[], idleMs: number): GitRegistryError {
  return new GitRegistryError(
    'git-timeout',
    `git ${args[0]} gave no output for ${idleMs / 1000} s and was stopped (--git-timeout): git may be waiting for a remote (a partial clone ` +
      "fetches the base's files from it), for credentials, or for a lock another git process holds; check that the remote answers, " +
      'clone without --filter, or raise --git-timeout',
  );
}

/** Run git for a short answer, with its exit code and both outputs (simple-git hides the code). */
async function runGit(at: GitAt, args: string[]): Promise<GitResult> {
  const { child, ended } = spawnGit(at, args);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  return { code: await ended, stdout, stderr };
}

/** Git's first line of complaint, without its `fatal: ` or `error: ` label. */
function stderrLine({ stderr, code }: GitResult): string {
  const line = stderr.trim().split('\n')[0] ?? '';
  return line.replace(/^(fatal|error): /, '') || `git exited with code ${code}`;
}

interface RepositoryState {
  /** The registry root's path inside the repository, `''` or ending in `/`. */
  prefix: string;
  /** The repository's top folder, as git names it (links resolved). */
  toplevel: string;
  shallow: boolean;
  /** The one commit `ref` names, when it names exactly one that exists here. */
  commit: string | undefined;
  /** The ref name in `ref` that more than one ref of the repository has (a tag and a branch, say). */
  ambiguous: string | undefined;
}

/** One `git rev-parse` for everything the gate needs to know before reading: where, how deep, which commit. */
async function inspectRepository(at: GitAt, ref: string): Promise<RepositoryState> {
  const root = at.cwd;
  // Without --quiet, git warns of an ambiguous name (whatever the user's core.warnAmbiguousRefs); a
  // ref that names no commit is told by the exit code and the lines, as with it.
  const result = await runGit(at, [
    '-c',
    'core.warnAmbiguousRefs=true',
    'rev-parse',
    '--show-prefix',
    '--show-toplevel',
    '--is-shallow-repository',
    '--verify',
    `${ref}^{commit}`,
  ]);
  if (/not a git repository/i.test(result.stderr)) {
    throw new GitRegistryError(
      'not-a-repository',
      `${root} is not inside a Git repository; capreg check reads the base registry from Git, so run it in a clone of the registry's repository`,
    );
  }
  if (/safe\.bareRepository/.test(result.stderr)) {
    // GIT_CONFIG (git-config.ts): a folder on the way up holds a Git directory's files, committed or left there.
    throw new GitRegistryError(
      'not-a-repository',
      `git takes a folder at or above ${root} for a Git directory (${stderrLine(result)}): it holds HEAD, objects/ and refs/, ` +
        'which capreg never reads as the repository; remove them from the registry, or run where the real .git is found',
    );
  }
  const [prefix = '', toplevel = '', shallow = '', ...rest] = result.stdout.split('\n').map((line) => line.trim());
  // The first three lines come before the ref is looked at: without them git could not start.
  if (shallow !== 'true' && shallow !== 'false') throw new GitRegistryError('git-failed', `cannot run git in ${root}: ${stderrLine(result)}`);
  // A range (`main..HEAD`) prints several lines and still exits 1: only one commit and success count.
  const commits = rest.filter((line) => line !== '');
  const commit = result.code === 0 && commits.length === 1 && /^[0-9a-f]{40,64}$/.test(commits[0]!) ? commits[0] : undefined;
  const warned = /^warning: refname '(.*)' is ambiguous\.$/m.exec(result.stderr)?.[1];
  // A whole commit id is the commit whatever refs are named so: git warns, and takes the object.
  const ambiguous = warned !== undefined && /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/i.test(warned) ? undefined : warned;
  return { prefix, toplevel, shallow: shallow === 'true', commit, ambiguous };
}

/**
 * `ref` names a ref that more than one ref of the repository has: git takes the first in its search
 * order (gitrevisions(7)), a tag `origin/main` before the remote branch `origin/main`. A tag is pushed
 * by anyone who can push, and fetched by a CI checkout with its history: one at the pull request's
 * own commit would have the gate compare the change with itself and pass it unbumped.
 */
async function ambiguousRefError(git: SimpleGit, ref: string, name: string): Promise<GitRegistryError> {
  const candidates = [`refs/${name}`, `refs/tags/${name}`, `refs/heads/${name}`, `refs/remotes/${name}`, `refs/remotes/${name}/HEAD`];
  const output = await git.raw(['for-each-ref', '--format=%(refname)', ...candidates]).catch(() => '');
  const found = output.split('\n').filter((line) => candidates.includes(line));
  if (found.length > 1) {
    return new GitRegistryError(
      'bad-ref',
      `--against "${ref}" is ambiguous: more than one ref is named "${name}" (${found.join(', ')}), which git resolves to one of them without a word; ` +
        `name the one you mean in full (${found.map((full) => `--against ${full}`).join(' or ')}), or delete the others`,
    );
  }
  const named = found[0] ?? 'a ref';
  if (!/^[0-9a-f]+$/i.test(name)) {
    // A ref named like one in the repository's folder (a tag `HEAD`, a branch `FETCH_HEAD`): git takes that one.
    return new GitRegistryError(
      'bad-ref',
      `--against "${ref}" is ambiguous: "${name}" names ${named} and also ${name} of the repository, which git resolves to the latter without a word; ` +
        `delete ${named}${found[0] !== undefined ? `, or name it in full (--against ${found[0]})` : ''}`,
    );
  }
  // A ref named like the start of a commit id (a branch `705cffc`): git takes the ref.
  return new GitRegistryError(
    'bad-ref',
    `--against "${ref}" is ambiguous: "${name}" names ${named} and also begins the id of a commit, which git resolves to the ref without a word; ` +
      `name the one you mean in full (${found[0] !== undefined ? `--against ${found[0]}, or ` : ''}the whole commit id)`,
  );
}

/**
 * A folder on the way to the registry root, as the user named it, that is a link inside the
 * repository (`reg -> other`), or undefined. Git answers for the folder a link points to, so the
 * base would be read there: a pull request that moved the registry and left a link in its place
 * would have every protocol compared with nothing (all "added", no bump asked). Links outside the
 * repository (a checkout reached through one) change nothing and are let be.
 */
function linkInsideRepository(namedRoot: string, toplevel: string): string | undefined {
  const inside = (folder: string): boolean => folder === toplevel || folder.startsWith(`${toplevel}${path.sep}`);
  for (let folder = path.resolve(namedRoot); path.dirname(folder) !== folder; folder = path.dirname(folder)) {
    try {
      if (lstatSync(folder).isSymbolicLink() && inside(realpathSync(path.dirname(folder)))) return folder;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/**
 * Why `ref` names no single commit: it names several (a range, `^!`, `^@`), an object that is no
 * commit (`main^{tree}`), something git cannot resolve (`main@{upstream}` without an upstream), or
 * nothing at all (a typo, a ref not fetched).
 */
async function refError(git: SimpleGit, at: GitAt, ref: string, shallow: boolean): Promise<GitRegistryError> {
  const revisions = await runGit(at, ['rev-parse', '--revs-only', ref]);
  if (revisions.code !== 0) {
    return new GitRegistryError('bad-ref', `--against "${ref}" names no commit: ${stderrLine(revisions)}; pass a branch, a tag or a commit id`);
  }
  const names = revisions.stdout.split('\n').filter((line) => line.trim() !== '');
  const one = names.length === 1 && !names[0]!.startsWith('^') ? names[0]!.trim() : undefined;
  const type = one !== undefined ? (await runGit(at, ['cat-file', '-t', one])).stdout.trim() : undefined;
  // `HEAD^@` of a commit with one parent prints that one commit, yet it is a set of commits.
  if (names.length > 1 || (names.length === 1 && one === undefined) || (type === 'commit' && ref.includes('^@'))) return rangeError(ref);
  if (type === 'commit') {
    // `:/message` takes everything after it as the pattern, `^{commit}` included.
    return new GitRegistryError('bad-ref', `--against "${ref}" cannot be read as one commit here; pass its commit id instead: --against ${one}`);
  }
  if (type === 'tag') {
    // An annotated tag of a tree or a blob (a tag of a commit resolved above).
    const tagged = (await runGit(at, ['cat-file', '-t', `${one}^{}`])).stdout.trim() || 'object';
    return new GitRegistryError(
      'bad-ref',
      `--against "${ref}" names a Git tag of a ${tagged}, not of a commit; pass a branch, a tag of a commit or a commit id`,
    );
  }
  if (type) {
    return new GitRegistryError('bad-ref', `--against "${ref}" names a Git ${type}, not a commit; pass a branch, a tag or a commit id`);
  }
  return missingRefError(git, ref, shallow);
}

function rangeError(ref: string): GitRegistryError {
  const range = /^(.*?)\.\.\.?(.*)$/.exec(ref);
  const [from, to] = [range?.[1] || 'HEAD', range?.[2] || 'HEAD'];
  const example = range
    ? `--against ${from}, or the merge base: --against "$(git merge-base ${from} ${to})"`
    : 'the merge base of a branch: --against "$(git merge-base main HEAD)"';
  return new GitRegistryError(
    'bad-ref',
    `--against "${ref}" names ${range ? 'a range' : 'a set'} of commits; the gate compares with one commit, so pass one ref, e.g. ${example}`,
  );
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
    .sort((a, b) => a.distance - b.distance || byCodeUnits(a.name, b.name));
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

/** One `ls-tree -l -z` record: `<mode> <type> <oid> <size>\t<path>`, the size padded with spaces ("-" for folders and submodules). */
function treeRecord(record: string): { mode?: string; type?: string; oid?: string; size?: string; fullPath: string } | undefined {
  const tab = record.indexOf('\t');
  if (tab === -1) return undefined;
  const [mode, type, oid, size] = record.slice(0, tab).split(/ +/);
  return { mode, type, oid, size, fullPath: record.slice(tab + 1) };
}

/** `changedPaths` gives up past this many: a change that touches more is parsed without the hint. */
const MAX_CHANGED_PATHS = 100_000;

/** No file system holds a path near it; a crafted tree's longer entry is refused rather than held. */
const MAX_TREE_RECORD_BYTES = 64 * 1024;

/**
 * Run git and hand each NUL-terminated record of its output (or `separator`-terminated) to
 * `onRecord` as it comes, until `onRecord` returns false (git is then stopped): a listing of
 * millions of entries is never held whole.
 */
function streamRecords(at: GitAt, args: string[], onRecord: (record: string) => boolean, separator = 0, input = ''): Promise<void> {
  return new Promise((resolve, reject) => {
    const { child, ended } = spawnGit(at, args, input);
    let pending: Buffer = Buffer.alloc(0);
    let stderr = '';
    let stopped = false;
    const stop = (error?: Error): void => {
      if (stopped) return;
      stopped = true;
      // Not another byte read: git gets SIGPIPE if it outlives the signal.
      child.stdout.destroy();
      child.kill();
      if (error) reject(error);
      else resolve();
    };
    const tooLong = (): void =>
      stop(
        new GitRegistryError(
          'bad-tree',
          `git ${args[0]} gave an entry over ${MAX_TREE_RECORD_BYTES / 1024} KiB long, a path no file system holds: the commit was crafted or is corrupt; compare with another commit`,
        ),
      );
    child.stdout.on('data', (chunk: Buffer) => {
      if (stopped) return;
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      let start = 0;
      for (let end = pending.indexOf(separator, start); end !== -1; end = pending.indexOf(separator, start)) {
        if (end - start > MAX_TREE_RECORD_BYTES) return tooLong();
        let more: boolean;
        try {
          more = onRecord(pending.toString('utf8', start, end));
        } catch (error) {
          return stop(error instanceof Error ? error : new Error(String(error)));
        }
        start = end + 1;
        if (!more) return stop();
      }
      pending = pending.subarray(start);
      if (pending.length > MAX_TREE_RECORD_BYTES) tooLong();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < 4096) stderr += chunk.toString('utf8');
    });
    ended.then(
      (code) => (code === 0 ? stop() : stop(new Error(stderrLine({ code, stdout: '', stderr })))),
      (error: Error) => stop(error),
    );
  });
}

/** The blobs under capabilities/ and how many folders hold them; the listing stops one past `maxEntries` of either. */
async function listTree(at: GitAt, ref: string, commit: string, prefix: string, maxEntries: number): Promise<{ entries: TreeEntry[]; folders: number }> {
  const base = `${prefix}capabilities/`;
  const entries: TreeEntry[] = [];
  let folders = 0;
  const seen = new Set<string>();
  // Every folder Git writes holds a file, and a file within the depth limit is in at most that many
  // folders: more entries than that (submodules, say, which neither limit counts) is a crafted tree,
  // refused before it fills memory.
  const maxRecords = (maxEntries + 1) * (MAX_FOLDER_DEPTH + 2);
  const onRecord = (record: string): boolean => {
    const parsed = treeRecord(record);
    if (!parsed) return true;
    const { mode, type, oid, size, fullPath } = parsed;
    // Like the disk reader: dot files and dot folders are not part of the registry.
    if (fullPath.startsWith(base) && isHiddenPath(fullPath.slice(prefix.length))) return true;
    if (seen.has(fullPath) && fullPath.includes('\uFFFD')) {
      // Two names whose bytes that are not UTF-8 read the same once each is shown as U+FFFD, as the
      // disk reader reads them too: a tree Git writes, but one the gate cannot tell apart.
      throw new GitRegistryError(
        'bad-tree',
        `the tree of "${ref}" (${commit.slice(0, 12)}) holds two names that are not valid UTF-8 and read the same, "${fullPath}" (their bad bytes shown as \uFFFD), which the gate cannot tell apart; rename them in UTF-8`,
      );
    }
    // Git never writes a tree that holds one name twice or an empty name (`git fsck` reports both);
    // which of two entries a checkout would use is anyone's guess, so the gate compares with neither.
    const invalid = seen.has(fullPath)
      ? `lists "${fullPath}" twice`
      : fullPath.split('/').includes('')
        ? `holds an entry with an empty name ("${fullPath}")`
        : seen.size >= maxRecords
          ? `holds more than ${maxRecords} entries under ${base} for at most ${maxEntries} files`
          : undefined;
    if (invalid) {
      throw new GitRegistryError(
        'bad-tree',
        `the tree of "${ref}" (${commit.slice(0, 12)}) ${invalid}, which Git never writes (\`git fsck\` reports it): the commit was crafted or is corrupt; compare with another commit`,
      );
    }
    seen.add(fullPath);
    if (fullPath === `${prefix}capabilities` && mode === SYMLINK_MODE) {
      // The disk reader follows it (inside the root); reading the base without it would see no capability there at all.
      throw new GitRegistryError(
        'bad-tree',
        `capabilities/ at "${ref}" (${commit.slice(0, 12)}) is a symbolic link, which the gate does not follow in Git; make capabilities/ a folder (links inside it are followed)`,
      );
    }
    if (type === 'commit' && (fullPath.startsWith(base) || fullPath === `${prefix}capabilities`)) throw submodule(ref, commit, fullPath.slice(prefix.length));
    // As on disk, folders count against the file limit on their own (RegistryBudget.checkFolders).
    // The disk reader meets folders down to one level past the depth limit (that one it refuses).
    if (type === 'tree' && fullPath.startsWith(base)) {
      if (pathDepth(fullPath.slice(prefix.length)) <= MAX_FOLDER_DEPTH + 1) folders += 1;
      return folders <= maxEntries;
    }
    if (type !== 'blob' || !mode || !oid || !fullPath.startsWith(base)) return true;
    if (!/^[0-9]+$/.test(size ?? '')) throw new GitRegistryError('git-failed', `git ls-tree ${commit.slice(0, 12)} gave no size for ${fullPath}`);
    entries.push({ mode, oid, size: Number(size), path: fullPath.slice(prefix.length) });
    // One over the limit is enough for the caller to refuse the registry.
    return entries.length <= maxEntries;
  };
  try {
    // -t lists the folders too, so that a folder listed twice is seen as such; -l gives each blob's size.
    await streamRecords(at, ['ls-tree', '-r', '-t', '-l', '-z', '--full-tree', commit, '--', `${prefix}capabilities`], onRecord);
  } catch (error) {
    if (error instanceof GitRegistryError) throw error;
    throw new GitRegistryError('git-failed', `git ls-tree ${commit.slice(0, 12)} failed: ${gitMessage(error)}`);
  }
  return { entries, folders };
}

/** Read blobs with one `git cat-file --batch` process; the result maps each oid to its bytes. */
async function readBlobs(at: GitAt, oids: readonly string[]): Promise<Map<string, Buffer>> {
  const unique = [...new Set(oids)];
  if (unique.length === 0) return new Map<string, Buffer>();
  const { child, ended } = spawnGit(at, ['cat-file', '--batch'], `${unique.join('\n')}\n`);
  const chunks: Buffer[] = [];
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const code = await ended;
  if (code !== 0) throw new GitRegistryError('git-failed', `git cat-file --batch exited with code ${code}: ${stderr.trim()}`);
  return parseBatch(Buffer.concat(chunks), unique);
}

/** `<oid> <type> <size>\n<content>\n` per object, or `<oid> missing\n`, in the order `oids` were asked for. */
function parseBatch(output: Buffer, oids: readonly string[]): Map<string, Buffer> {
  const blobs = new Map<string, Buffer>();
  let offset = 0;
  for (const oid of oids) {
    const newline = output.indexOf(10, offset);
    const header = newline === -1 ? [] : output.toString('utf8', offset, newline).split(' ');
    // A corrupt object can come out shorter than its header says (git still exits 0): every byte
    // after it would be read as the wrong file.
    if (header[0] !== oid) throw corruptObject(oid);
    offset = newline + 1;
    if (header[1] === 'missing') continue;
    const size = Number(header[2]);
    if (!Number.isSafeInteger(size) || output[offset + size] !== 10) throw corruptObject(oid);
    blobs.set(oid, output.subarray(offset, offset + size));
    offset += size + 1;
  }
  return blobs;
}

function corruptObject(oid: string): GitRegistryError {
  return new GitRegistryError('git-failed', `git cat-file cannot read object ${oid} in full: the repository may be corrupt; run \`git fsck\``);
}

/** Where a symbolic link stored in Git points, relative to the registry root, or undefined when outside it or hidden. */
function linkTarget(linkPath: string, target: string): string | undefined {
  if (path.posix.isAbsolute(target)) return undefined;
  // `a/l/../b`: the system follows `a/l` first (it may be a link) and goes up from where it leads;
  // joined as text it would be `a/b`, another file. Only a leading run of `..` is read here.
  const segments = target.split('/');
  const firstName = segments.findIndex((segment) => segment !== '..');
  if (firstName !== -1 && segments.slice(firstName).includes('..')) return undefined;
  // `../shared/x/` names the folder `../shared/x`, as on disk.
  const resolved = path.posix.normalize(path.posix.join(path.posix.dirname(linkPath), target)).replace(/\/+$/, '');
  // As on disk (linkRefusal): inside the registry root, out of hidden files and folders.
  if (resolved === '..' || resolved.startsWith('../')) return undefined;
  return isHiddenPath(resolved) ? undefined : resolved;
}

/**
 * A submodule where the registry's files are: Git holds only the commit it points to, its files are
 * in another repository, so the gate cannot compare them; read as nothing, a capability there would
 * be "added" on every change, and pass unbumped.
 */
function submodule(ref: string, commit: string, relative: string): GitRegistryError {
  return new GitRegistryError(
    'bad-tree',
    `${relative} at "${ref}" (${commit.slice(0, 12)}) is a Git submodule: its files are in another repository, which the gate does not read, so it cannot compare them; keep the registry's files in this repository`,
  );
}

/**
 * The blobs at `paths` (relative to the registry root), which the listing of capabilities/ did not
 * give: link targets. `recursive`: the blobs under them (the paths are folders). The listing is read
 * as git writes it and stopped one blob past `maxEntries`, for the caller's budget to refuse.
 */
async function entriesAt(
  at: GitAt,
  ref: string,
  commit: string,
  prefix: string,
  paths: readonly string[],
  { recursive = false, maxEntries = Number.POSITIVE_INFINITY }: { recursive?: boolean; maxEntries?: number } = {},
): Promise<Map<string, TreeEntry>> {
  const found = new Map<string, TreeEntry>();
  const onRecord = (record: string): boolean => {
    const parsed = treeRecord(record);
    if (!parsed) return true;
    const { mode, type, oid, size, fullPath } = parsed;
    const relative = fullPath.slice(prefix.length);
    if (type === 'commit' && !isHiddenPath(relative)) throw submodule(ref, commit, relative);
    // A link's target is never hidden (linkTarget), so a hidden segment is inside it: not part of
    // the registry, and not counted (the disk reader does not read hidden folders either).
    if (type !== 'blob' || !mode || !oid || !/^[0-9]+$/.test(size ?? '') || isHiddenPath(relative)) return true;
    found.set(relative, { mode, oid, size: Number(size), path: relative });
    return found.size <= maxEntries;
  };
  // A few hundred paths per call keep the command line short.
  for (let start = 0; start < paths.length && found.size <= maxEntries; start += 256) {
    const chunk = paths.slice(start, start + 256).map((relative) => `${prefix}${relative}`);
    try {
      await streamRecords(at, ['ls-tree', ...(recursive ? ['-r'] : []), '-l', '-z', '--full-tree', commit, '--', ...chunk], onRecord);
    } catch (error) {
      if (error instanceof GitRegistryError) throw error;
      throw new GitRegistryError('git-failed', `git ls-tree ${commit.slice(0, 12)} failed: ${gitMessage(error)}`);
    }
  }
  return found;
}

/** What reading a tree keeps to: the size limit of each text file and the registry's limits. */
export type TreeReadOptions = Pick<ReadOptions, 'maxFileBytes' | 'maxFiles' | 'maxTotalBytes'>;

/**
 * The registry under `root` as it is at `ref`, in the form the compiler takes. `root` may be a
 * subfolder of the repository: paths are taken relative to it.
 */
export async function readGitRegistry(root: string, ref: string, options: TreeReadOptions & GitOptions): Promise<GitRegistry> {
  const base = await openGitBase(root, ref, root, options);
  return { commit: base.commit, input: await base.read(options) };
}

/** A ref that was found: its commit, and a reader for its registry. */
export interface GitBase {
  commit: string;
  read(options: TreeReadOptions): Promise<RegistryInput>;
  /**
   * The files under `capabilities/` that Git sees differ between the commit and the working tree
   * (paths relative to the registry root), or undefined when git cannot say. A hint only: Git
   * compares after its filters (line endings), so callers still compare bytes.
   */
  changedPaths(): Promise<Set<string> | undefined>;
  /** Whether Git tracks a file under `.capreg/` of the registry root (its caches), in the index or the working tree. */
  tracksCache(): Promise<boolean>;
}

export interface GitOptions {
  /** How long a git process may give no output before it is stopped (`--git-timeout`); GIT_IDLE_SECONDS.default when absent. */
  idleMs?: number;
}

/**
 * Resolve `ref` (every problem the user must fix is thrown here, as a GitRegistryError) and return a
 * reader for the registry at that commit, so that callers can start reading next to other work.
 */
export async function openGitBase(root: string, ref: string, namedRoot: string = root, options: GitOptions = {}): Promise<GitBase> {
  if (ref === '' || ref.startsWith('-')) throw new GitRegistryError('bad-ref', `--against "${ref}" is not a Git ref`);
  const at: GitAt = { cwd: root, idleMs: options.idleMs ?? GIT_IDLE_SECONDS.default * 1000 };
  // Only for the messages of a ref that was not found (local reads): a silent git is then no answer, not an error.
  const git = simpleGit({ baseDir: root, config: [...GIT_CONFIG], timeout: { block: at.idleMs } });
  const { prefix, toplevel, shallow, commit, ambiguous } = await inspectRepository(at, ref);
  const link = linkInsideRepository(namedRoot, toplevel);
  if (link !== undefined) {
    throw new GitRegistryError(
      'linked-root',
      `the registry root ${namedRoot} is reached through ${link}, a link inside the repository; git would read the base from ` +
        `${prefix === '' ? 'the top of the repository' : prefix} instead, so nothing would be compared; run capreg check on the folder itself (--root ${path.join(toplevel, prefix)})`,
    );
  }
  if (ambiguous !== undefined) throw await ambiguousRefError(git, ref, ambiguous);
  if (commit === undefined) throw await refError(git, at, ref, shallow);
  return {
    commit,
    read: (limits) => readTree({ at, ref, commit, prefix }, limits),
    tracksCache: async () => {
      let tracked = false;
      try {
        await streamRecords(at, ['ls-files', '-z', '--', '.capreg'], () => {
          tracked = true;
          return false;
        });
      } catch (error) {
        if (error instanceof GitRegistryError) throw error;
        throw new GitRegistryError('git-failed', `git ls-files failed: ${gitMessage(error)}`);
      }
      return tracked;
    },
    changedPaths: async () => {
      // A hint only: past MAX_CHANGED_PATHS it is no hint, and git is stopped rather than its list held.
      const paths = new Set<string>();
      try {
        // --relative: paths relative to the registry root (the working directory), which may be a subfolder.
        await streamRecords(at, ['diff', '--name-only', '-z', '--no-renames', '--relative', commit, '--', 'capabilities'], (record) => {
          if (record !== '') paths.add(record);
          return paths.size <= MAX_CHANGED_PATHS;
        });
      } catch {
        return undefined;
      }
      return paths.size <= MAX_CHANGED_PATHS ? paths : undefined;
    },
  };
}

/**
 * A capability's folder that is a link (`capabilities/x -> ../shared/x`) is walked on disk as the
 * folder it points to; here its target's files are listed and put under the link's path, so that
 * the base has the capability (without them it would count as added, its version bump unchecked).
 * One hop, inside the registry root and out of hidden folders, as for links to files. A link Git
 * cannot follow to a folder or a file (its target is a link, lies behind one, is missing, inside
 * capabilities/, reached with `..` after a name (the system would follow what comes before), hidden or
 * outside the root) is returned in `unfollowed`: the caller refuses the capability it would be.
 * As on disk, a folder is walked once: links are taken in the disk reader's order, and what an
 * earlier link already walked is not walked again under a later one (so links cannot multiply a
 * folder either). `overLimit`: the targets hold more than `maxEntries` files, and were not all listed.
 * `emptied`: links to a folder walked before, capability folders with nothing in them (on disk: a
 * folder without its PROTOCOL.md). `counted`: what the disk reader counts besides the entries,
 * against the limits: each link it walks as a file of its own, and the folders it walks through them.
 */
async function followFolderLinks(
  at: GitAt,
  ref: string,
  commit: string,
  prefix: string,
  entries: TreeEntry[],
  maxEntries: number,
): Promise<{ entries: TreeEntry[]; unfollowed: string[]; emptied: string[]; overLimit: boolean; counted: { files: number; folders: number } }> {
  const links = entries.filter((entry) => entry.mode === SYMLINK_MODE && pathDepth(entry.path) === 1);
  const none = { files: 0, folders: 0 };
  if (links.length === 0) return { entries, unfollowed: [], emptied: [], overLimit: false, counted: none };
  const stored = await readBlobs(
    at,
    links.filter((entry) => entry.size <= MAX_LINK_BYTES).map((entry) => entry.oid),
  );
  const targets = new Map<string, string>();
  const unfollowed: string[] = [];
  // readRegistry's order: the entries of capabilities/ by name.
  for (const link of [...links].sort((a, b) => (a.path < b.path ? -1 : 1))) {
    const text = link.size <= MAX_LINK_BYTES ? stored.get(link.oid)?.toString('utf8') : undefined;
    const target = text === undefined ? undefined : linkTarget(link.path, text);
    if (target === undefined) unfollowed.push(link.path);
    // One of the registry's own folders: on disk it is walked under whichever of its two paths comes
    // first, which the listing cannot tell without walking as disk does; refused, so that the gate
    // fails closed rather than see the capability as added.
    else if (target === 'capabilities' || target.startsWith('capabilities/')) unfollowed.push(link.path);
    else targets.set(link.path, target);
  }
  if (targets.size === 0) return { entries, unfollowed, emptied: [], overLimit: false, counted: none };
  const linked = [...new Set(targets.values())];
  // Outside capabilities/, which the first fetch took: their files come in one fetch too.
  await prefetchMissing(
    at,
    commit,
    linked.map((target) => `${prefix}${target}`),
    maxEntries,
  );
  const below = await entriesAt(at, ref, commit, prefix, linked, { recursive: true, maxEntries });
  if (below.size > maxEntries) return { entries, unfollowed, emptied: [], overLimit: true, counted: none };
  // By path, so that each link finds what is under its target without a pass over all of it.
  const sorted = [...below.keys()].sort();
  const itself = (value: string): string => value;
  const followed: TreeEntry[] = [];
  const replaced = new Set<string>();
  const emptied: string[] = [];
  /** Folders walked so far, as on disk (its `visited`). */
  const walked = new Set<string>();
  /** Whether `folder` or a folder above it was walked: a lookup per level, however many links. */
  const walkedAt = (folder: string): boolean => {
    for (let end = folder.length; end > 0; end = folder.lastIndexOf('/', end - 1)) {
      if (walked.has(folder.slice(0, end))) return true;
    }
    return false;
  };
  for (const [link, target] of targets) {
    const file = below.get(target);
    if (file === undefined && walkedAt(target)) {
      // On disk the link's folder is already visited: it is walked as empty.
      replaced.add(link);
      emptied.push(link);
      continue;
    }
    const under = `${target}/`;
    let count = 0;
    for (let index = searchSorted(sorted, under, itself); index < sorted.length && sorted[index]!.startsWith(under); index += 1) {
      const path = sorted[index]!;
      // In a folder inside the target that an earlier link walked (nothing above the target was).
      if (walked.size > 0 && walkedAt(path.slice(0, path.lastIndexOf('/')))) continue;
      followed.push({ ...below.get(path)!, path: `${link}/${path.slice(under.length)}`, source: path });
      count += 1;
    }
    if (count > 0) {
      walked.add(target);
      replaced.add(link);
    } else if (file === undefined || file.mode === SYMLINK_MODE) {
      // A link to a file is a file of capabilities/, as on disk; anything else Git cannot follow.
      unfollowed.push(link);
    }
  }
  // The link's folder and every folder under it that holds a followed file, as deep as the disk reader goes.
  const folders = new Set<string>(replaced);
  for (const { path } of followed) {
    for (let end = path.lastIndexOf('/'); end > 'capabilities/'.length; end = path.lastIndexOf('/', end - 1)) {
      const folder = path.slice(0, end);
      if (folders.has(folder)) break;
      if (pathDepth(folder) <= MAX_FOLDER_DEPTH + 1) folders.add(folder);
    }
  }
  return {
    entries: [...entries.filter((entry) => !replaced.has(entry.path)), ...followed].sort(byKey((entry) => entry.path)),
    unfollowed,
    emptied,
    overLimit: false,
    counted: { files: replaced.size, folders: folders.size },
  };
}

/** The promisor remote of each place git runs in, asked once (the tree and then its folder links' targets are prefetched). */
const promisors = new WeakMap<GitAt, Promise<string | undefined>>();

/** The remote a partial clone fetches its missing objects from (the first `remote.<name>.promisor`); undefined in a full clone. */
function promisorRemote(at: GitAt): Promise<string | undefined> {
  let remote = promisors.get(at);
  if (remote === undefined) {
    remote = runGit(at, ['config', '--type=bool', '--get-regexp', '^remote\\..*\\.promisor$']).then((promisor) => {
      const name = /^remote\.(.+)\.promisor true$/m.exec(promisor.stdout)?.[1];
      // A name git would take for an option is no remote to fetch from.
      return promisor.code !== 0 || name === undefined || name.startsWith('-') ? undefined : name;
    });
    promisors.set(at, remote);
  }
  return remote;
}

/**
 * In a partial clone (`git clone --filter=blob:none`), the base's files that are not here yet are
 * fetched from its promisor remote in one fetch, as git itself fetches a batch of missing objects.
 * Without it, `ls-tree -l` (for the sizes) fetches them one at a time: a fetch per changed file, a
 * round trip each. A fetch that fails changes nothing: git then fetches each file as it is read,
 * and says what is wrong.
 */
async function prefetchMissing(at: GitAt, commit: string, paths: readonly string[], maxFiles: number): Promise<void> {
  const remote = await promisorRemote(at);
  if (remote === undefined) return;
  const missing: string[] = [];
  try {
    // --missing=print lists an object that is not here with a `?`, and fetches nothing. The walk starts
    // at each path's tree: a commit and a path would list nothing for a commit that left capabilities/
    // as its parent had it (rev-list's history simplification), as a base's tip often does. A path
    // the commit does not hold (a link's missing target) is passed over.
    await streamRecords(
      at,
      ['rev-list', '--objects', '--no-object-names', '--missing=print', '--ignore-missing', '--stdin'],
      (line) => {
        if (line.startsWith('?')) missing.push(line.slice(1));
        // More than the registry may hold: the listing refuses it past the first of them, which git
        // would otherwise fetch one at a time (`ls-tree -l`), up to limits.maxFiles round trips.
        return missing.length <= maxFiles;
      },
      10,
      // One a line: a path that holds a line break (a link's crafted target) is not passed as two.
      paths
        .filter((path) => !path.includes('\n'))
        .map((path) => `${commit}:${path}\n`)
        .join(''),
    );
  } catch (error) {
    if (error instanceof GitRegistryError) throw error;
    return;
  }
  if (missing.length === 0) return;
  const fetch = spawnGit(
    at,
    [
      '-c',
      'fetch.negotiationAlgorithm=noop',
      'fetch',
      '--no-tags',
      '--no-write-fetch-head',
      '--recurse-submodules=no',
      '--filter=blob:none',
      '--progress',
      '--stdin',
      remote,
    ],
    `${missing.join('\n')}\n`,
  );
  // Its progress only keeps the idle timer alive.
  fetch.child.stdout.resume();
  fetch.child.stderr.resume();
  await fetch.ended;
}

async function readTree(
  { at, ref, commit, prefix }: { at: GitAt; ref: string; commit: string; prefix: string },
  options: TreeReadOptions,
): Promise<RegistryInput> {
  // The same limits as on disk, counted before any blob is read: files from the listing, bytes
  // from the sizes it gives.
  const budget = new RegistryBudget(options, `capabilities/ at ${ref}`);
  const maxFiles = options.maxFiles ?? LIMITS.maxFiles.default;
  await prefetchMissing(at, commit, [`${prefix}capabilities`], maxFiles);
  const { entries: own, folders: ownFolders } = await listTree(at, ref, commit, prefix, maxFiles);
  budget.checkFiles(own.length);
  budget.checkFolders(ownFolders);
  const { entries: listed, unfollowed, emptied, overLimit, counted } = await followFolderLinks(at, ref, commit, prefix, own, maxFiles);
  budget.checkFiles(overLimit ? maxFiles + 1 : listed.length + counted.files);
  budget.checkFolders(ownFolders + counted.folders);
  // As on disk (read-registry.ts): nothing in a folder nested deeper than the limit is read, and
  // each such folder is refused.
  const tooDeep = new Set<string>();
  const entries = listed.filter((entry) => {
    if (pathDepth(entry.path) <= MAX_FOLDER_DEPTH + 1) return true;
    tooDeep.add(entry.path.split('/', MAX_FOLDER_DEPTH + 2).join('/'));
    return false;
  });
  const byPath = new Map(entries.map((entry) => [entry.path, entry]));

  const textEntries = entries.filter((entry) => isTextInput(entry.path));
  // Sizes first: a blob over the limit is refused without being read, whatever its size.
  const fits = (entry: TreeEntry): boolean => entry.size <= (entry.mode === SYMLINK_MODE ? MAX_LINK_BYTES : options.maxFileBytes);
  for (const entry of textEntries) if (entry.mode !== SYMLINK_MODE && fits(entry)) budget.addText(entry.path, entry.size);
  const firstRead = await readBlobs(
    at,
    textEntries.filter(fits).map((entry) => entry.oid),
  );
  // A symbolic link is stored as a blob holding its target: follow it, as the disk reader does, to a
  // file inside the registry root and out of hidden folders (one hop: a link to a link is refused).
  const links = textEntries.filter((candidate) => candidate.mode === SYMLINK_MODE);
  const linkPaths = new Map<string, string | undefined>();
  for (const entry of links) {
    const stored = fits(entry) ? firstRead.get(entry.oid) : undefined;
    // From where the link really is: one read through a folder link leads from its own folder there.
    linkPaths.set(entry.path, stored !== undefined ? linkTarget(entry.source ?? entry.path, stored.toString('utf8')) : undefined);
  }
  const elsewhere = [...new Set([...linkPaths.values()].filter((target): target is string => target !== undefined && !byPath.has(target)))];
  const outside = elsewhere.length > 0 ? await entriesAt(at, ref, commit, prefix, elsewhere) : new Map<string, TreeEntry>();
  const targets = new Map<string, TreeEntry | undefined>();
  for (const entry of links) {
    const target = linkPaths.get(entry.path);
    const resolved = target !== undefined ? (byPath.get(target) ?? outside.get(target)) : undefined;
    const followed = resolved && resolved.mode !== SYMLINK_MODE ? resolved : undefined;
    targets.set(entry.path, followed);
    if (followed && fits(followed)) budget.addText(entry.path, followed.size);
  }
  const extraOids = [...targets.values()]
    .filter((entry): entry is TreeEntry => entry !== undefined && fits(entry) && !firstRead.has(entry.oid))
    .map((entry) => entry.oid);
  const blobs = extraOids.length > 0 ? new Map([...firstRead, ...(await readBlobs(at, extraOids))]) : firstRead;

  const files: SourceFile[] = [...tooDeep].map((folder) => ({ path: folder, problem: folderTooDeep(folder) }));
  // Refused as the capability it would be on disk, so that the gate cannot miss it as "added".
  for (const link of unfollowed) {
    files.push({
      path: `${link}/PROTOCOL.md`,
      problem: `${link} is a symbolic link at ${ref} that Git cannot follow to a folder inside the registry root (its target is a link, lies behind one, is missing, hidden, outside the root or inside capabilities/, or it goes up with \`..\` after a name); refused`,
    });
  }
  for (const entry of textEntries) {
    let blob = entry;
    if (entry.mode === SYMLINK_MODE) {
      const target = targets.get(entry.path);
      if (!target) {
        files.push({
          path: entry.path,
          problem: `symbolic link at ${ref} points outside the registry root, into a hidden folder, to another link or to nothing; refused`,
        });
        continue;
      }
      blob = target;
    }
    if (blob.size > options.maxFileBytes) {
      files.push({ path: entry.path, problem: sizeProblem(blob.size, options.maxFileBytes, entry.path) });
      continue;
    }
    const bytes = blobs.get(blob.oid);
    if (!bytes) throw new GitRegistryError('git-failed', `git object ${blob.oid} (${entry.path} at ${ref}) is missing from the repository`);
    files.push({ path: entry.path, ...decodeTextFile(bytes, options.maxFileBytes, entry.path) });
  }

  const allPaths = entries.map((entry) => entry.path).sort();
  const folders = new Set<string>(emptied);
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
    files: files.sort(byKey((file) => file.path)),
    allPaths,
    foldersWithoutProtocol: [...folders].filter((folder) => !protocolFolders.has(folder)).sort(),
  };
}
