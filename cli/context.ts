// What a command needs from the outside world, passed in so commands run in-process in tests.
export interface CliContext {
  cwd: string;
  env: NodeJS.ProcessEnv;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

/** A subcommand: parses its own arguments, returns the exit code (0 ok, 1 problems, 2 usage/config/internal). */
export type Command = (argv: string[], context: CliContext) => Promise<number>;

/** Thrown for bad usage or configuration; the CLI prints the message and exits 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

export function processContext(): CliContext {
  return {
    cwd: process.cwd(),
    env: process.env,
    stdout: writeStdout,
    stderr: (text) => process.stderr.write(text),
  };
}

/** The error that closed standard output, once one has. */
let stdoutFailed: NodeJS.ErrnoException | undefined;

/**
 * A report on standard output. Its reader can go before it is all written (`capreg lint | head`:
 * EPIPE) or the write fail (`> /dev/full`: ENOSPC); Node threw that as an unhandled 'error' event,
 * a stack trace and exit 1, which says "problems found". Said once on stderr instead, the rest of
 * the output dropped, and the command ends as it would (a build still writes its outputs) with exit
 * 2. The listener is added by the first write: `serve` over stdio, which never writes here, handles
 * its stream's errors itself.
 */
function writeStdout(text: string): void {
  if (stdoutFailed !== undefined) return;
  if (!process.stdout.listeners('error').includes(onStdoutError)) process.stdout.on('error', onStdoutError);
  process.stdout.write(text);
}

function onStdoutError(error: NodeJS.ErrnoException): void {
  if (stdoutFailed !== undefined) return;
  stdoutFailed = error;
  process.stderr.write(`capreg: cannot write to standard output (${error.code ?? error.message}); the rest of the output is dropped\n`);
  // Set when the process exits, after the command's own exit code: a report not all written is not a success.
  process.on('exit', () => {
    process.exitCode = 2;
  });
}
