// `source` of the manifest: the commit the registry was built from, and whether its files had
// uncommitted changes. Outside a Git work tree there is no source. Inside one that Git refuses to
// read (a repository owned by another user: "detected dubious ownership"; a broken `.git`), there
// is none either, and the build says why instead of writing `"source": null` without a word.
import { simpleGit } from 'simple-git';
import type { Manifest } from '../compiler/types.js';
import { GIT_CONFIG, GIT_IDLE_SECONDS } from './git-config.js';

export interface GitSource {
  source: Manifest['source'];
  /** Why there is no source although Git was asked (git's own first line, or its silence), and what to do. */
  problem?: string;
}

/** simple-git's words when its `timeout.block` stopped git. */
const BLOCK_TIMEOUT = /\bblock timeout reached\b/;

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).trim().split('\n')[0] ?? '';
}

/**
 * The manifest's `source`. A git that says nothing for `idleMs` (a lock another git holds, a hook
 * that hangs) is stopped, and the build goes on without a source, as for any failure, and says why.
 */
export async function gitSource(root: string, idleMs: number = GIT_IDLE_SECONDS.default * 1000): Promise<GitSource> {
  const git = simpleGit({ baseDir: root, config: [...GIT_CONFIG], timeout: { block: idleMs } });
  try {
    if (!(await git.checkIsRepo())) return { source: null };
    let commit: string | null = null;
    try {
      commit = (await git.revparse(['HEAD'])).trim();
    } catch (error) {
      if (BLOCK_TIMEOUT.test(firstLine(error))) throw error;
      commit = null; // a repository without commits yet
    }
    const status = await git.raw(['status', '--porcelain', '--untracked-files=all', '--', 'capabilities', 'capreg.config.yaml']);
    return { source: { commit, dirty: status.trim() !== '' } };
  } catch (error) {
    // No git on the machine: a source cannot be asked for, as outside a work tree.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || /\bspawn git ENOENT\b/.test(firstLine(error))) return { source: null };
    if (BLOCK_TIMEOUT.test(firstLine(error))) {
      return { source: null, problem: `git gave no output for ${idleMs / 1000} s and was stopped: another git process may hold a lock, or a hook hangs` };
    }
    return {
      source: null,
      problem: `git failed: ${firstLine(error)}; fix the repository (for "dubious ownership", \`git config --global --add safe.directory <path>\` or run as the owner)`,
    };
  }
}

/** The warning a build prints when Git was there but did not say where the registry came from. */
export function sourceWarning(command: string, problem: string): string {
  return `${command}: warning: the manifest has no source (commit): ${problem}\n`;
}
