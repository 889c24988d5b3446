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

/**
 * The environment of the gate's git processes (cli/git-registry.ts), over the user's: messages in
 * English (some are read), and no prompt on the terminal for credentials, which would hold the
 * command with no one there to answer (git then fails, and says why). simple-git refuses an
 * environment that holds EDITOR, PAGER or GIT_ASKPASS, so its few local reads keep the user's.
 */
export const GIT_ENV: Readonly<Record<string, string>> = { LC_ALL: 'C', GIT_TERMINAL_PROMPT: '0' };

/**
 * `capreg check --git-timeout`: seconds a git process may give no output before it is stopped. A
 * partial clone fetches missing objects from its remote while the gate reads them, and a fetch that
 * hangs would hold a CI job until the runner's own limit.
 */
export const GIT_IDLE_SECONDS = { default: 120, ceiling: 3600 } as const;
