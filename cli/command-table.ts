// The one table of capreg's commands and their flags. Parsing (`parseFlags`), `--help` and
// docs/cli.md all follow it: adding a flag is one entry here plus its row in docs/cli.md, and
// test/cli/help.test.ts fails when the two disagree. This module imports nothing heavy, so
// `capreg --help` and `capreg new` load only it and the command they run.
import { parseArgs } from 'node:util';
import { suggestion } from '../compiler/did-you-mean.js';
import { EVAL_FORMATS } from '../compiler/evals/format.js';
import { formatNames } from '../compiler/formatters/index.js';
import { UsageError, type Command } from './context.js';
import { GIT_IDLE_SECONDS } from './git-config.js';

export interface FlagSpec {
  readonly type: 'string' | 'boolean';
  readonly short?: string;
  /** The value's placeholder in help, e.g. DIR, FILE, N. */
  readonly value?: string;
  readonly help: string;
  /** The default, as help shows it. */
  readonly default?: string;
  /** May be given more than once; the values come as a list. */
  readonly multiple?: true;
}

export interface CommandSpec {
  readonly summary: string;
  /** Positional arguments as the usage line shows them, e.g. "<id>"; none when absent. */
  readonly positionals?: string;
  readonly flags: Readonly<Record<string, FlagSpec>>;
  readonly load: () => Promise<Command>;
}

const ROOT = {
  type: 'string',
  value: 'DIR',
  help: 'the registry root (the folder holding capabilities/)',
  default: 'the nearest folder upwards with capreg.config.yaml or capabilities/',
} as const satisfies FlagSpec;
const formatHelp = (names: readonly string[]): string => `output format: ${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;
const FORMAT = { type: 'string', short: 'f', value: 'NAME', help: formatHelp(formatNames({ gate: false })), default: 'stylish' } as const satisfies FlagSpec;
const MAX_WARNINGS = { type: 'string', value: 'N', help: 'exit 1 when there are more than N warnings' } as const satisfies FlagSpec;
const NO_CACHE = { type: 'boolean', help: 'parse every file again instead of using <root>/.capreg/cache/' } as const satisfies FlagSpec;
const JOBS = {
  type: 'string',
  short: 'j',
  value: 'N',
  help: 'parse in up to N worker threads (1 to 256)',
  default: 'the cores available',
} as const satisfies FlagSpec;
/** `--watch` of lint and build; `what` is what the command does again ("lint again"). */
const watchFlag = (what: string) =>
  ({
    type: 'boolean',
    short: 'w',
    help: `${what} on every change under capabilities/ or to capreg.config.yaml, reading and parsing only the changed files; each status line starts with the local time`,
  }) as const satisfies FlagSpec;
const TOOL_PREFIX = {
  type: 'string',
  value: 'P',
  help: 'prefix for every MCP tool name, e.g. yi_ gives yi_list_capabilities',
  default: "''",
} as const satisfies FlagSpec;

export const COMMANDS = {
  lint: {
    summary: 'lint every capability of the registry',
    flags: {
      root: ROOT,
      format: FORMAT,
      'max-warnings': MAX_WARNINGS,
      'no-cache': NO_CACHE,
      jobs: JOBS,
      watch: watchFlag('lint again'),
    },
    load: async () => (await import('./commands/lint.js')).lintCommand,
  },
  build: {
    summary: 'lint, then write dist/manifest.json and dist/skill/SKILL.md',
    flags: {
      root: ROOT,
      out: { type: 'string', value: 'DIR', help: 'where to write manifest.json and skill/SKILL.md', default: '<root>/dist' },
      format: FORMAT,
      'max-warnings': MAX_WARNINGS,
      'no-cache': NO_CACHE,
      jobs: JOBS,
      watch: watchFlag('rebuild'),
      'tool-prefix': { ...TOOL_PREFIX, help: `the tool prefix the server runs with (\`serve --tool-prefix\`), so dist/skill/SKILL.md names the right tools` },
      'sign-key': {
        type: 'string',
        value: 'FILE',
        help: 'also write manifest.json.sig, a detached JWS over the manifest, with this private key (from `capreg keygen`)',
      },
    },
    load: async () => (await import('./commands/build.js')).buildCommand,
  },
  check: {
    summary: 'compare with a Git ref and enforce protocol_version bumps (the version gate)',
    flags: {
      against: { type: 'string', value: 'REF', help: 'the Git ref to compare with, e.g. origin/main (required)' },
      root: ROOT,
      format: { ...FORMAT, help: formatHelp(formatNames({ gate: true })) },
      'max-warnings': MAX_WARNINGS,
      summary: { type: 'string', value: 'FILE', help: 'also append a Markdown summary to FILE (e.g. $GITHUB_STEP_SUMMARY)' },
      'no-cache': NO_CACHE,
      jobs: JOBS,
      'git-timeout': {
        type: 'string',
        value: 'SECONDS',
        help: `stop a git process that gives no output for SECONDS (1 to ${GIT_IDLE_SECONDS.ceiling}): a fetch of a partial clone, a credential or lock wait`,
        default: String(GIT_IDLE_SECONDS.default),
      },
    },
    load: async () => (await import('./commands/check.js')).checkCommand,
  },
  eval: {
    summary: 'run the routing evals (capabilities/<id>/evals.yaml) through the find_capabilities ranker',
    flags: { root: ROOT, format: { ...FORMAT, help: formatHelp(EVAL_FORMATS) }, 'no-cache': NO_CACHE },
    load: async () => (await import('./commands/eval.js')).evalCommand,
  },
  new: {
    summary: 'scaffold capabilities/<id>/PROTOCOL.md',
    positionals: '<id>',
    flags: { root: ROOT },
    load: async () => (await import('./commands/new.js')).newCommand,
  },
  serve: {
    summary: 'serve the manifest over MCP (stdio, or Streamable HTTP with --http)',
    flags: {
      root: ROOT,
      manifest: {
        type: 'string',
        value: 'FILE|URL',
        help: 'the manifest to serve: a file (watched and reloaded) or an https:// URL (polled)',
        default: '<root>/dist/manifest.json',
      },
      principals: { type: 'string', value: 'FILE', help: 'API keys (as SHA-256) and their scopes (watched and reloaded)' },
      http: { type: 'boolean', help: 'serve Streamable HTTP instead of stdio', default: 'stdio' },
      port: { type: 'string', value: 'N', help: 'HTTP port; 0 picks a free one (--http only)', default: '8765' },
      host: { type: 'string', value: 'H', help: 'HTTP listen address (--http only)', default: '127.0.0.1' },
      'tool-prefix': TOOL_PREFIX,
      'metrics-port': {
        type: 'string',
        value: 'N',
        help: 'serve Prometheus metrics on GET /metrics on this port (its own listener; 0 picks a free one)',
        default: 'off',
      },
      'metrics-host': { type: 'string', value: 'H', help: 'listen address of the metrics port (needs --metrics-port)', default: '127.0.0.1' },
      'log-level': { type: 'string', value: 'LEVEL', help: 'fatal, error, warn, info, debug, trace or silent (JSON logs on stderr)', default: 'info' },
      'audit-log': { type: 'string', value: 'FILE', help: 'append one JSON line per protocol handed out or refused to FILE' },
      'jwt-jwks': { type: 'string', value: 'URL|FILE', help: 'verify JWTs against this JWKS (--http only)' },
      'jwt-public-key': { type: 'string', value: 'FILE', help: 'verify JWTs against this PEM public key (--http only)' },
      'jwt-issuer': { type: 'string', value: 'ISS', help: 'the only accepted JWT iss (required with a JWT key)' },
      'jwt-audience': { type: 'string', value: 'AUD', help: 'the only accepted JWT aud (required with a JWT key)' },
      'allowed-origins': { type: 'string', value: 'A,B', help: 'exact browser origins allowed to call (--http only)', default: 'loopback origins' },
      'allowed-hosts': {
        type: 'string',
        value: 'H,I',
        help: "host names a request's Host header may name, e.g. the name a reverse proxy forwards (--http only)",
        default: 'loopback names on a loopback --host, any otherwise',
      },
      'max-connections': {
        type: 'string',
        value: 'N',
        help: 'open HTTP connections at most; past it the oldest idle one is closed, else 503 (--http only)',
        default: '512',
      },
      'caller-concurrency': {
        type: 'string',
        value: 'N',
        help: "MCP requests of one caller answered at once; the caller's others wait their turn (--http only)",
        default: '4',
      },
      'headers-timeout': { type: 'string', value: 'SECONDS', help: 'time a client has to send the request headers (--http only)', default: '10' },
      'request-timeout': {
        type: 'string',
        value: 'SECONDS',
        help: 'time a client has to send the whole request, and the most a connection may sit silent while no answer is being prepared for it (--http only)',
        default: '30',
      },
      'user-compile-workers': {
        type: 'string',
        value: 'N',
        help: 'worker threads that check saved user capabilities and render their protocols',
        default: '1',
      },
      'user-compile-budget': {
        type: 'string',
        value: 'SECONDS',
        help: 'time one save may take to check, or one stored revision to render, in a worker',
        default: '5',
      },
      'user-store': {
        type: 'string',
        value: 'sqlite:PATH|postgres://…',
        help: 'where user-defined capabilities are kept',
        default: 'sqlite:<root>/.capreg/user-capabilities.db',
      },
      'verify-key': {
        type: 'string',
        value: 'FILE',
        multiple: true,
        help: 'a public JWKS (from `capreg keygen`); every manifest must then be signed by one of its keys (repeatable, for rotation)',
      },
      'require-signature': { type: 'boolean', help: 'refuse to start without --verify-key (a signature is required whenever a key is given)' },
      'poll-interval': { type: 'string', value: 'SECONDS', help: 'how often a manifest URL is polled, with up to 10% jitter (URL only)', default: '30' },
      'manifest-cache': {
        type: 'string',
        value: 'DIR',
        help: 'keep every activated manifest (and signature) here; boot from it when the URL is unreachable (URL only)',
      },
      'allow-insecure-manifest-url': { type: 'boolean', help: 'allow an http:// manifest URL that is not on loopback' },
    },
    load: async () => (await import('./commands/serve.js')).serveCommand,
  },
  export: {
    summary: "write the manifest's capabilities as Agent Skills folders (DIR/<name>/SKILL.md)",
    flags: {
      format: { type: 'string', value: 'NAME', help: 'the export format: agent-skills (required)' },
      out: { type: 'string', value: 'DIR', help: 'the folder to write; replaced in one step, and only if empty or an earlier export (required)' },
      root: ROOT,
      manifest: { type: 'string', value: 'FILE', help: 'the manifest to export', default: '<root>/dist/manifest.json' },
      principals: { type: 'string', value: 'FILE', help: 'a principals file (as for serve); with --as, export only what that principal may see' },
      as: { type: 'string', value: 'ID', help: 'the principal id whose view to export (needs --principals)' },
      scopes: { type: 'string', value: 'S,T', help: 'export only what these scopes may see, e.g. reports:read,calendar:read' },
      marketplace: { type: 'boolean', help: 'also write .claude-plugin/marketplace.json (one plugin; version from the manifest revision)' },
    },
    load: async () => (await import('./commands/export.js')).exportCommand,
  },
  keygen: {
    summary: 'write a new Ed25519 key pair for signing manifests (private JWK, public JWKS)',
    flags: { out: { type: 'string', value: 'DIR', help: 'the folder to write the two key files to; existing files are never overwritten (required)' } },
    load: async () => (await import('./commands/keygen.js')).keygenCommand,
  },
} as const satisfies Record<string, CommandSpec>;

export type CommandName = keyof typeof COMMANDS;

/** Flags every command answers; main() handles them before the command is loaded. */
export const GLOBAL_FLAGS = {
  help: { type: 'boolean', short: 'h', help: "print the command's usage and flags" },
} as const satisfies Record<string, FlagSpec>;

export const PATH_RULE = 'Relative paths given on the command line start from the working directory; defaults start from the registry root.';
const EXIT_CODES = 'Exit codes: 0 success, 1 problems found, 2 usage, configuration or internal error.';

export function isCommandName(name: string): name is CommandName {
  return Object.hasOwn(COMMANDS, name);
}

/** Did-you-mean for a mistyped command name, or ''. */
export function commandSuggestion(name: string): string {
  return suggestion(name, Object.keys(COMMANDS));
}

/** `-h`/`--help` before any `--` asks for help, whatever else the line holds. */
export function asksForHelp(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  const flags = end === -1 ? argv : argv.slice(0, end);
  return flags.some((arg) => arg === '--help' || arg === `-${GLOBAL_FLAGS.help.short}`);
}

type FlagValues<F extends Readonly<Record<string, FlagSpec>>> = {
  [K in keyof F]?: F[K]['type'] extends 'boolean' ? boolean : F[K] extends { multiple: true } ? string[] : string;
};

function flagLabel(name: string, flag: FlagSpec): string {
  return `${flag.short ? `-${flag.short}, ` : ''}--${name}${flag.value ? ` ${flag.value}` : ''}`;
}

function optionsOf(flags: Readonly<Record<string, FlagSpec>>): Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }> {
  return Object.fromEntries(
    Object.entries(flags).map(([name, flag]) => [
      name,
      { type: flag.type, ...(flag.short ? { short: flag.short } : {}), ...(flag.multiple ? { multiple: true } : {}) },
    ]),
  );
}

/**
 * The command's flags and positionals, strictly: an unknown flag (with a did-you-mean), a flag
 * given twice, a missing value or an unexpected argument is a usage error that points at --help.
 */
export function parseFlags<N extends CommandName>(
  name: N,
  argv: readonly string[],
): { values: FlagValues<(typeof COMMANDS)[N]['flags']>; positionals: string[] } {
  const spec: CommandSpec = COMMANDS[name];
  const hint = `; \`capreg ${name} --help\` lists its flags`;
  const options = optionsOf(spec.flags);
  // A lenient pass first, to name an unknown or repeated flag precisely (the strict parser's
  // message for those gives no suggestion, and it silently keeps the last of two values).
  const { tokens } = parseArgs({ args: [...argv], options, allowPositionals: true, strict: false, tokens: true });
  const seen = new Set<string>();
  for (const token of tokens) {
    if (token.kind !== 'option') continue;
    if (!Object.hasOwn(options, token.name)) {
      const known = Object.keys(options).map((flag) => `--${flag}`);
      throw new UsageError(`unknown option ${token.rawName}${suggestion(token.rawName, known)}${hint}`);
    }
    if (seen.has(token.name) && !spec.flags[token.name]?.multiple) throw new UsageError(`--${token.name} is given more than once${hint}`);
    seen.add(token.name);
  }
  try {
    const parsed = parseArgs({ args: [...argv], options, allowPositionals: spec.positionals !== undefined, strict: true });
    return { values: parsed.values as FlagValues<(typeof COMMANDS)[N]['flags']>, positionals: parsed.positionals };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') {
      const extra = tokens.find((token) => token.kind === 'positional');
      throw new UsageError(`unexpected argument ${JSON.stringify(extra?.kind === 'positional' ? extra.value : '')}: capreg ${name} takes no arguments${hint}`);
    }
    throw new UsageError(`${(error as Error).message}${hint}`);
  }
}

function rows(flags: Readonly<Record<string, FlagSpec>>): string[] {
  const entries = Object.entries(flags).map(
    ([name, flag]) => [flagLabel(name, flag), flag.default ? `${flag.help} (default: ${flag.default})` : flag.help] as const,
  );
  const width = Math.max(...entries.map(([label]) => label.length));
  return entries.map(([label, text]) => `  ${label.padEnd(width)}  ${text}`);
}

export function commandHelp(name: CommandName): string {
  const spec: CommandSpec = COMMANDS[name];
  return [
    `usage: capreg ${name}${spec.positionals ? ` ${spec.positionals}` : ''} [options]`,
    '',
    `${spec.summary}.`,
    '',
    'options:',
    ...rows({ ...spec.flags, ...GLOBAL_FLAGS }),
    '',
    PATH_RULE,
    EXIT_CODES,
    '',
  ].join('\n');
}

export function generalHelp(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((name) => name.length));
  return [
    'usage: capreg <command> [options]',
    '',
    'commands:',
    ...Object.entries(COMMANDS).map(([name, spec]) => `  ${name.padEnd(width)}  ${spec.summary}`),
    '',
    '`capreg <command> --help` (or `capreg help <command>`) lists its flags; `capreg --version` prints the version.',
    'Every command that reads a registry takes --root DIR (default: the nearest folder upwards with capreg.config.yaml or capabilities/).',
    PATH_RULE,
    EXIT_CODES,
    '',
  ].join('\n');
}
