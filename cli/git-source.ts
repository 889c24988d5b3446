// `source` of the manifest: the commit the registry was built from, and whether its files had
// uncommitted changes. Outside a Git work tree there is no source. Inside one that Git refuses to
// read (a repository owned by another user: "detected dubious ownership"; a broken `.git`), there
// is none either, and the build says why instead of writing `"source": null` without a word.
import { simpleGit } from 'simple-git';
import type { Manifest } from '../compiler/types.js';
import { GIT_CONFIG, GIT_IDLE_SECONDS } from './git-config.js';

export interface GitSource {
  source: Manifest['source'];
  /** Why there is no source although Git was asked: git's own first line. */
  problem?: string;
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).trim().split('\n')[0] ?? '';
}

export async function gitSource(root: string): Promise<GitSource> {
  // A git that says nothing for that long (waiting for a lock, say) leaves the manifest without a source, as any failure does.
  const git = simpleGit({ baseDir: root, config: [...GIT_CONFIG], timeout: { block: GIT_IDLE_SECONDS.default * 1000 } });
  try {
    if (!(await git.checkIsRepo())) return { source: null };
    let commit: string | null = null;
    try {
      commit = (await git.revparse(['HEAD'])).trim();
    } catch {
      commit = null; // a repository without commits yet
    }
    const status = await git.raw(['status', '--porcelain', '--untracked-files=all', '--', 'capabilities', 'capreg.config.yaml']);
    return { source: { commit, dirty: status.trim() !== '' } };
  } catch (error) {
    // No git on the machine: a source cannot be asked for, as outside a work tree.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || /\bspawn git ENOENT\b/.test(firstLine(error))) return { source: null };
    return { source: null, problem: firstLine(error) };
  }
}

/** The warning a build prints when Git was there but refused to say where the registry came from. */
export function sourceWarning(command: string, problem: string): string {
  return `${command}: warning: the manifest has no source (commit): git failed: ${problem}; fix the repository (for "dubious ownership", \`git config --global --add safe.directory <path>\` or run as the owner)\n`;
}
