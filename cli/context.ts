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
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
  };
}
