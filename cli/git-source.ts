// `source` of the manifest: the commit the registry was built from, and whether its files had
// uncommitted changes. Outside a Git work tree there is no source.
import { simpleGit } from 'simple-git';
import type { Manifest } from '../compiler/types.js';

export async function gitSource(root: string): Promise<Manifest['source']> {
  const git = simpleGit({ baseDir: root });
  try {
    if (!(await git.checkIsRepo())) return null;
    let commit: string | null = null;
    try {
      commit = (await git.revparse(['HEAD'])).trim();
    } catch {
      commit = null; // a repository without commits yet
    }
    const status = await git.raw(['status', '--porcelain', '--untracked-files=all', '--', 'capabilities', 'capreg.config.yaml']);
    return { commit, dirty: status.trim() !== '' };
  } catch {
    return null;
  }
}
