// The settings every git command capreg runs is given on its command line (where a repository's
// own files cannot override them).
//
// A registry in a subfolder of the repository is a folder whose files a pull request controls. Made
// to look like a Git directory (HEAD, objects/, refs/ and a config with `core.worktree = .`), it is
// taken by git, run there, for the repository: discovery tries the folder itself before going up to
// the real `.git`. Its config can run a program (`core.fsmonitor`, on `git status`), and its refs
// and objects are the author's: the gate would compare with a base of their choosing, and pass an
// unbumped change. `safe.bareRepository=explicit` (git 2.38 and later) has git refuse such a
// folder unless GIT_DIR or --git-dir names it; a `.git` folder or file is found as before.
export const GIT_CONFIG: readonly string[] = ['safe.bareRepository=explicit'];

/** {@link GIT_CONFIG} as arguments put before a git subcommand. */
export const GIT_CONFIG_ARGS: readonly string[] = GIT_CONFIG.flatMap((setting) => ['-c', setting]);
