// capreg's command line: pick the subcommand, run it, turn errors into exit codes.
// 0 success, 1 problems found, 2 usage, configuration or internal error.
// Each command's module is imported only when that command runs: start-up is paid by every
// invocation, and a rebuild answered from the build cache should not load the compiler at all.
import { processContext, UsageError, type CliContext, type Command } from './context.js';
import { CAPREG_VERSION } from './version.js';

const commands: Record<string, { load: () => Promise<Command>; summary: string }> = {
  lint: { load: async () => (await import('./commands/lint.js')).lintCommand, summary: 'lint every capability of the registry' },
  build: { load: async () => (await import('./commands/build.js')).buildCommand, summary: 'lint, then write dist/manifest.json and dist/skill/SKILL.md' },
  check: { load: async () => (await import('./commands/check.js')).checkCommand, summary: 'compare with a Git ref and enforce protocol_version bumps (the version gate)' },
  new: { load: async () => (await import('./commands/new.js')).newCommand, summary: 'scaffold capabilities/<id>/PROTOCOL.md' },
  serve: { load: async () => (await import('./commands/serve.js')).serveCommand, summary: 'serve the manifest over MCP (stdio, or Streamable HTTP with --http)' },
};

function usage(): string {
  const width = Math.max(...Object.keys(commands).map((name) => name.length));
  return [
    'usage: capreg <command> [options]',
    '',
    'commands:',
    ...Object.entries(commands).map(([name, { summary }]) => `  ${name.padEnd(width)}  ${summary}`),
    '',
    'Every command takes --root DIR (default: the nearest folder upwards with capreg.config.yaml or capabilities/).',
    'Exit codes: 0 success, 1 problems found, 2 usage, configuration or internal error.',
    '',
  ].join('\n');
}

export async function main(argv: string[], context: CliContext = processContext()): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    (name === undefined ? context.stderr : context.stdout)(usage());
    return name === undefined ? 2 : 0;
  }
  if (name === '--version' || name === '-v') {
    context.stdout(`${CAPREG_VERSION}\n`);
    return 0;
  }
  const command = commands[name];
  if (!command) {
    context.stderr(`capreg: unknown command "${name}"\n\n${usage()}`);
    return 2;
  }
  try {
    const run = await command.load();
    return await run(rest, context);
  } catch (error) {
    if (error instanceof UsageError) {
      context.stderr(`capreg ${name}: ${error.message}\n`);
      return 2;
    }
    context.stderr(`capreg ${name}: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    return 2;
  }
}
