// Run a parse across every core in a process whose garbage collector has no helper threads.
//
// A command that parses (it has `--jobs`: lint, build, check) keeps every core busy with a parse
// worker while the main thread takes the documents in. V8's collector then still hands its
// concurrent marking and parallel scavenges of three heaps to helper threads, which take the
// cores from the parse: at 1,000 capabilities on two cores they used ~5 s of the build's 12 s of
// CPU, and the same build under `--single-threaded-gc` took 15 % less wall time, 21 % at 10,000
// (docs/benchmarks.md, "The collector's helper threads"). The flag can only be given when a
// process starts (set later, V8 aborts), so the command line starts itself once more with it.
// It costs the launcher's own start (~80 ms) and ~9 MiB of private memory, so a small registry
// runs in place; so does a parse with fewer workers than cores (`--jobs 1` on two), which is
// faster with the helpers on the free core.
//
// The launcher writes nothing, hands the child its standard streams, passes SIGINT, SIGTERM and
// SIGHUP on, and ends as the child did: its exit code, or the signal that ended it, raised again.
// The child ends as on SIGTERM when the launcher is gone (killed, say), through the IPC channel
// between them. If the child cannot be started, the command runs in place. (foreground-child does
// the same with a third process as the watchdog; the channel needs none.)
import { spawn } from 'node:child_process';
import { opendirSync } from 'node:fs';
import { availableParallelism, constants } from 'node:os';
import path from 'node:path';
import { asksForHelp, COMMANDS, isCommandName, parseFlags } from './command-table.js';
import { cacheDirectory } from './cache-folder.js';
import { parseJobs } from './options.js';
import { INLINE_LIMIT, threadCount } from './parse-workers.js';
import { findRegistryRoot } from './root.js';

/** The V8 flag a parse across every core runs under. */
export const PARSE_GC_FLAG = '--single-threaded-gc';

const FORWARDED_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * Fewest entries in capabilities/ for which the launcher pays: the flag saves ~1 ms per protocol
 * parsed on two cores, and the launcher costs ~80 ms.
 */
export const RESPAWN_MIN_ENTRIES = 256;

/** What the decision reads of the process; each defaults to this process's own. */
export interface LaunchContext {
  execArgv?: readonly string[];
  /** NODE_OPTIONS, which execArgv does not show. */
  nodeOptions?: string;
  cwd?: string;
  cores?: number;
}

/**
 * The Node options to start the command again with, or undefined to run it in place: it does not
 * parse, its flags or root do not parse (main() reports them), the registry is small, its parse
 * would leave a core to the collector (`--jobs` under the cores, or too few files), the parse cache
 * holds documents (most are answered from it: a rebuild of 1,000 with nothing changed takes
 * ~0.25 s, which the launcher would make ~0.33 s), or Node was given the collector's threads
 * already (the flag, or its `--no-` form) or a debugger (its port is the launcher's).
 */
export function respawnOptions(argv: readonly string[], context: LaunchContext = {}): string[] | undefined {
  const { execArgv = process.execArgv, nodeOptions = process.env['NODE_OPTIONS'] ?? '', cwd = process.cwd(), cores = availableParallelism() } = context;
  const [name, ...rest] = argv;
  if (name === undefined || !isCommandName(name) || !('jobs' in COMMANDS[name].flags) || asksForHelp(rest)) return undefined;
  const nodeGiven = [...execArgv, ...nodeOptions.split(/\s+/)];
  if (nodeGiven.some((option) => /^--(no-)?single[-_]threaded[-_]gc$|^--(inspect|debug)/.test(option))) return undefined;
  let entries: number;
  let jobs: number | undefined;
  try {
    const given: Record<string, unknown> = parseFlags(name, rest).values;
    jobs = parseJobs(typeof given.jobs === 'string' ? given.jobs : undefined);
    const root = findRegistryRoot(cwd, typeof given.root === 'string' ? given.root : undefined);
    // The cache first: a warm one (the common case) needs no count.
    if (given['no-cache'] !== true && isFolderWithEntries(cacheDirectory(root))) return undefined;
    entries = countEntries(path.join(root, 'capabilities'), Math.max(RESPAWN_MIN_ENTRIES, INLINE_LIMIT * cores));
  } catch {
    return undefined;
  }
  if (entries < RESPAWN_MIN_ENTRIES || threadCount(entries, jobs ?? cores) < cores) return undefined;
  return [...execArgv, PARSE_GC_FLAG];
}

function isFolderWithEntries(folder: string): boolean {
  try {
    return countEntries(folder, 1) > 0;
  } catch {
    return false;
  }
}

/** Entries of `folder`, counted up to `most`. */
function countEntries(folder: string, most: number): number {
  const dir = opendirSync(folder);
  try {
    let count = 0;
    while (count < most && dir.readSync() !== null) count += 1;
    return count;
  } finally {
    dir.closeSync();
  }
}

/**
 * Run the command line in a child started with `options` (respawnOptions) and end this process as
 * it ended. Resolves false, having started nothing, when the child could not be started.
 */
export function runRespawned(options: readonly string[], script: string, argv: readonly string[]): Promise<boolean> {
  return new Promise((resolve) => {
    // The channel is only there to close when this process ends (followLauncher).
    const child = spawn(process.execPath, [...options, script, ...argv], { stdio: ['inherit', 'inherit', 'inherit', 'ipc'] });
    child.channel?.unref();
    const forward = (signal: NodeJS.Signals): void => {
      child.kill(signal);
    };
    const detach = (): void => {
      for (const signal of FORWARDED_SIGNALS) process.off(signal, forward);
    };
    for (const signal of FORWARDED_SIGNALS) process.on(signal, forward);
    // Only a child that never started is run in place; one that did ends with its exit.
    child.once('error', () => {
      if (child.pid !== undefined) return;
      detach();
      resolve(false);
    });
    child.once('exit', (code, signal) => {
      detach();
      // A shell's status for a process a signal ended (128 + its number), should raising it here not end this one.
      process.exitCode = signal === null ? (code ?? 2) : 128 + (constants.signals[signal] ?? 0);
      // End as the child did: the same signal, with its default action now that no listener is left.
      if (signal !== null) process.kill(process.pid, signal);
      resolve(true);
    });
  });
}

/**
 * In the child: once the launcher is gone (its end of the channel closed), end as SIGTERM ends the
 * command (a watch stops, a build stops where it is; outputs are only ever renamed into place),
 * instead of running on with no one waiting for it.
 */
export function followLauncher(): void {
  if (process.channel === undefined || !process.execArgv.includes(PARSE_GC_FLAG)) return;
  process.channel.unref();
  process.once('disconnect', () => process.kill(process.pid, 'SIGTERM'));
}
