// capreg's command line: pick the subcommand, run it, turn errors into exit codes.
// 0 success, 1 problems found, 2 usage, configuration or internal error.
// Each command's module is imported only when that command runs: start-up is paid by every
// invocation, and a rebuild answered from the build cache should not load the compiler at all.
// Commands, flags and help text come from one table (command-table.ts).
import { asksForHelp, commandHelp, commandSuggestion, COMMANDS, generalHelp, isCommandName } from './command-table.js';
import { processContext, UsageError, type CliContext } from './context.js';
import { CAPREG_VERSION } from '../compiler/contract.js';
import { plainText } from '../compiler/formatters/escape.js';

function unknownCommand(name: string, context: CliContext): number {
  context.stderr(`capreg: unknown command "${name}"${commandSuggestion(name)}\n\n${generalHelp()}`);
  return 2;
}

export async function main(argv: string[], context: CliContext = processContext()): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined) {
    context.stderr(generalHelp());
    return 2;
  }
  if (name === 'help' || name === '--help' || name === '-h') {
    const [topic, ...extra] = rest;
    if (topic === undefined) {
      context.stdout(generalHelp());
      return 0;
    }
    if (extra.length > 0) {
      context.stderr('capreg help: usage: capreg help [<command>]\n');
      return 2;
    }
    if (!isCommandName(topic)) return unknownCommand(topic, context);
    context.stdout(commandHelp(topic));
    return 0;
  }
  if (name === '--version' || name === '-v') {
    if (rest.length > 0) {
      context.stderr(`capreg ${name}: unexpected argument ${JSON.stringify(rest[0])}: usage: capreg --version\n`);
      return 2;
    }
    context.stdout(`${CAPREG_VERSION}\n`);
    return 0;
  }
  if (!isCommandName(name)) return unknownCommand(name, context);
  if (asksForHelp(rest)) {
    context.stdout(commandHelp(name));
    return 0;
  }
  try {
    const run = await COMMANDS[name].load();
    return await run(rest, context);
  } catch (error) {
    if (error instanceof UsageError) {
      context.stderr(`capreg ${name}: ${plainText(error.message)}\n`);
      return 2;
    }
    context.stderr(`capreg ${name}: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    return 2;
  }
}
