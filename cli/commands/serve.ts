// capreg serve: load the manifest (and principals), then serve MCP over stdio (default) or
// Streamable HTTP (`--http`). Resolves with 0 on SIGINT/SIGTERM/SIGHUP (or, on stdio, when the client
// closes stdin); 2 when the manifest, principals or JWT settings are unusable at start. A user store
// (SPEC §8) that does not answer does not stop it: the Git catalog keeps serving.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { JwtConfigError, type JwtOptions } from '../../server/auth/jwt.js';
import { LoadError } from '../../server/reloadable.js';
import { startRuntime, type Runtime, type RuntimeOptions } from '../../server/runtime.js';
import { normalizeHostName } from '../../server/host-header.js';
import { isManifestUrl } from '../../server/manifest-source.js';
import { KEY_FILE_LIMITS, readBoundedSync } from '../../server/read-file.js';
import { parseVerificationKeys, SigningKeyError } from '../../server/signature.js';
import { TOOL_PREFIX_RULE, isValidToolPrefix } from '../../compiler/contract.js';
import {
  DEFAULT_CALLER_CONCURRENCY,
  DEFAULT_HEADERS_TIMEOUT_MS,
  DEFAULT_MAX_CONNECTIONS,
  DEFAULT_REQUEST_TIMEOUT_MS,
  MCP_PATH,
  startHttpServer,
} from '../../server/transports/http.js';
import { serveStdio } from '../../server/transports/stdio.js';
import { openAuditLog, type AuditLog } from '../../server/audit.js';
import { DEFAULT_LOG_LEVEL, LOG_LEVELS, createLogger, isLogLevel, lineLogger, type LogLevel } from '../../server/log.js';
import { METRICS_PATH, startMetricsServer, type MetricsServerHandle } from '../../server/metrics.js';
import { openUserStore, parseUserStoreSpec } from '../../server/user-store/open.js';
import { isUserStoreError } from '../../server/user-store/store.js';
import { defaultManifestFile } from '../build-outputs.js';
import { parseFlags } from '../command-table.js';
import { UsageError, type CliContext, type Command } from '../context.js';
import { wholeNumber } from '../options.js';
import { existingFile, findRegistryRoot } from '../root.js';
import { CAPREG_BIN, DEMO_KEY, DEMO_PRINCIPALS_FILE } from '../version.js';

export const DEFAULT_PORT = 8765;

interface ServeSettings {
  manifestFile: string;
  principalsFile: string | undefined;
  toolPrefix: string;
  http:
    | {
        host: string;
        port: number;
        allowedOrigins: string[] | undefined;
        allowedHosts: string[] | undefined;
        maxConnections: number;
        headersTimeoutMs: number;
        requestTimeoutMs: number;
        callerConcurrency: number;
      }
    | undefined;
  jwt: JwtOptions | undefined;
  /** `--user-store` and the folder its relative `sqlite:` paths start from; undefined: no user store. */
  userStore: { spec: string | undefined; root: string } | undefined;
  /** `--user-compile-workers`, `--user-compile-budget`. */
  userCompile: { workers?: number; budgetMs?: number };
  /** The flags that make a stdio server started from anywhere serve the same files (absolute paths). */
  clientArgs: string[];
  /** `--verify-key`, `--poll-interval`, `--manifest-cache`, `--allow-insecure-manifest-url`. */
  manifestSource: RuntimeOptions['manifestSource'];
  /** `--metrics-port`/`--metrics-host`; undefined: no metrics. */
  metrics: { host: string; port: number } | undefined;
  logLevel: LogLevel;
  /** `--audit-log`, absolute; undefined: no audit log. */
  auditLog: string | undefined;
}

function parseServeArgs(argv: string[], context: CliContext): ServeSettings {
  // The flags are declared in cli/command-table.ts (one entry each, documented in docs/cli.md).
  const { values } = parseFlags('serve', argv);

  // The root matters for the default manifest path and the default user store; an explicit
  // --manifest works anywhere.
  let root: string | undefined;
  let manifestFile: string;
  if (values.manifest === undefined) {
    root = findRegistryRoot(context.cwd, values.root);
    manifestFile = defaultManifestFile(root);
    if (!existsSync(manifestFile)) {
      throw new UsageError(
        `no manifest at ${manifestFile} (the default for --manifest under the registry root): run \`capreg build\` first, or pass --manifest FILE`,
      );
    }
  } else {
    root = values.root !== undefined ? findRegistryRoot(context.cwd, values.root) : optionalRoot(context.cwd);
    manifestFile = isManifestUrl(values.manifest) ? values.manifest : existingFile(context.cwd, '--manifest', values.manifest);
  }
  const manifestSource = manifestSourceSettings(values, isManifestUrl(manifestFile), context.cwd);
  const userStore = userStoreSettings(values['user-store'], root, context.cwd);

  const toolPrefix = values['tool-prefix'] ?? '';
  if (!isValidToolPrefix(toolPrefix)) {
    throw new UsageError(`--tool-prefix "${toolPrefix}" ${TOOL_PREFIX_RULE}`);
  }

  const httpOnly = (
    [
      'port',
      'host',
      'allowed-origins',
      'allowed-hosts',
      'max-connections',
      'caller-concurrency',
      'headers-timeout',
      'request-timeout',
      'jwt-jwks',
      'jwt-public-key',
      'jwt-issuer',
      'jwt-audience',
    ] as const
  ).filter((flag) => values[flag] !== undefined);
  if (!values.http && httpOnly.length > 0) {
    throw new UsageError(`--${httpOnly[0]} applies only with --http (stdio takes its key from CAPREG_API_KEY)`);
  }

  const jwtGiven = values['jwt-jwks'] !== undefined || values['jwt-public-key'] !== undefined;
  let jwt: JwtOptions | undefined;
  if (jwtGiven || values['jwt-issuer'] !== undefined || values['jwt-audience'] !== undefined) {
    if (values['jwt-jwks'] !== undefined && values['jwt-public-key'] !== undefined) {
      throw new UsageError('give either --jwt-jwks or --jwt-public-key, not both');
    }
    if (!jwtGiven) throw new UsageError('--jwt-issuer and --jwt-audience need --jwt-jwks or --jwt-public-key');
    const issuer = values['jwt-issuer'];
    const audience = values['jwt-audience'];
    if (!issuer || !audience) {
      throw new UsageError('JWT verification needs both --jwt-issuer and --jwt-audience (tokens for another issuer or audience must not be accepted)');
    }
    const jwksSource = values['jwt-jwks'];
    jwt = {
      issuer,
      audience,
      ...(jwksSource !== undefined ? { jwks: /^https?:\/\//i.test(jwksSource) ? jwksSource : existingFile(context.cwd, '--jwt-jwks', jwksSource) } : {}),
      ...(values['jwt-public-key'] !== undefined ? { publicKeyFile: existingFile(context.cwd, '--jwt-public-key', values['jwt-public-key']) } : {}),
    };
  }

  const principalsFile = values.principals !== undefined ? existingFile(context.cwd, '--principals', values.principals) : undefined;

  let http: ServeSettings['http'];
  if (values.http) {
    if (principalsFile === undefined && jwt === undefined) {
      throw new UsageError('--http needs --principals FILE or a JWT verifier (--jwt-jwks or --jwt-public-key): otherwise no request could authenticate');
    }
    http = {
      host: values.host ?? '127.0.0.1',
      port: parsePort(values.port),
      allowedOrigins: values['allowed-origins'] !== undefined ? parseOrigins(values['allowed-origins']) : undefined,
      allowedHosts: values['allowed-hosts'] !== undefined ? parseHostNames(values['allowed-hosts']) : undefined,
      ...parseConnectionLimits(values['max-connections'], values['headers-timeout'], values['request-timeout']),
      callerConcurrency:
        values['caller-concurrency'] === undefined ? DEFAULT_CALLER_CONCURRENCY : wholeNumber('--caller-concurrency', values['caller-concurrency'], 1, 1_000),
    };
  }
  const workers = values['user-compile-workers'];
  const budget = values['user-compile-budget'];
  const userCompile = {
    ...(workers !== undefined ? { workers: wholeNumber('--user-compile-workers', workers, 1, 64) } : {}),
    ...(budget !== undefined ? { budgetMs: seconds('--user-compile-budget', budget) } : {}),
  };
  const clientArgs = [
    ...(root !== undefined ? ['--root', root] : []),
    ...(values.manifest !== undefined ? ['--manifest', clientManifest(manifestFile)] : []),
    ...(values['verify-key'] ?? []).flatMap((file) => ['--verify-key', path.resolve(context.cwd, file)]),
    ...(principalsFile !== undefined ? ['--principals', principalsFile] : []),
    ...(toolPrefix !== '' ? ['--tool-prefix', toolPrefix] : []),
    ...(userStore?.spec !== undefined ? ['--user-store', clientUserStore(userStore.spec, userStore.root)] : []),
  ];
  return {
    manifestFile,
    principalsFile,
    toolPrefix,
    http,
    jwt,
    userStore,
    userCompile,
    clientArgs,
    manifestSource,
    ...observabilitySettings(values, context.cwd),
  };
}

/**
 * Signature keys and URL settings (docs/server.md, "Signed manifests"). Fail closed: once a key is
 * given, every manifest must be signed; `--require-signature` makes a missing key an error.
 */
function manifestSourceSettings(
  values: {
    'verify-key'?: string[] | undefined;
    'require-signature'?: boolean | undefined;
    'poll-interval'?: string | undefined;
    'manifest-cache'?: string | undefined;
    'allow-insecure-manifest-url'?: boolean | undefined;
  },
  fromUrl: boolean,
  cwd: string,
): ServeSettings['manifestSource'] {
  const keyFiles = values['verify-key'] ?? [];
  if (values['require-signature'] && keyFiles.length === 0) {
    throw new UsageError('--require-signature needs --verify-key FILE (the public JWKS from `capreg keygen`): without a key no signature can be checked');
  }
  const urlOnly = (['poll-interval', 'manifest-cache', 'allow-insecure-manifest-url'] as const).find((flag) => values[flag] !== undefined);
  if (!fromUrl && urlOnly !== undefined) throw new UsageError(`--${urlOnly} applies only with --manifest https://…`);
  let keys;
  if (keyFiles.length > 0) {
    const texts = keyFiles.map((file) => {
      const absolute = existingFile(cwd, '--verify-key', file);
      const read = readBoundedSync(absolute, KEY_FILE_LIMITS);
      if (!read.ok) throw new UsageError(`--verify-key: cannot read ${absolute}: ${read.reason}`);
      return { label: `--verify-key ${absolute}`, text: read.text };
    });
    try {
      keys = parseVerificationKeys(texts);
    } catch (error) {
      if (error instanceof SigningKeyError) throw new UsageError(error.message);
      throw error;
    }
  }
  const poll = values['poll-interval'];
  return {
    ...(keys ? { keys } : {}),
    ...(fromUrl
      ? {
          remote: {
            ...(poll !== undefined ? { pollIntervalMs: seconds('--poll-interval', poll) } : {}),
            ...(values['manifest-cache'] !== undefined ? { cacheDir: path.resolve(cwd, values['manifest-cache']) } : {}),
            allowInsecure: values['allow-insecure-manifest-url'] ?? false,
          },
        }
      : {}),
  };
}

/** `--metrics-port`, `--metrics-host`, `--log-level`, `--audit-log` (docs/server.md, "Metrics and logs"). */
function observabilitySettings(
  values: { 'metrics-port'?: string | undefined; 'metrics-host'?: string | undefined; 'log-level'?: string | undefined; 'audit-log'?: string | undefined },
  cwd: string,
): Pick<ServeSettings, 'metrics' | 'logLevel' | 'auditLog'> {
  const port = values['metrics-port'];
  if (port === undefined && values['metrics-host'] !== undefined) throw new UsageError('--metrics-host needs --metrics-port');
  const logLevel = values['log-level'] ?? DEFAULT_LOG_LEVEL;
  if (!isLogLevel(logLevel)) throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(', ')}, not "${logLevel}"`);
  const auditLog = values['audit-log'];
  if (auditLog === '') throw new UsageError('--audit-log needs a file name');
  return {
    metrics: port === undefined ? undefined : { host: values['metrics-host'] ?? '127.0.0.1', port: wholeNumber('--metrics-port', port, 0, 65535) },
    logLevel,
    auditLog: auditLog === undefined ? undefined : path.resolve(cwd, auditLog),
  };
}

function optionalRoot(cwd: string): string | undefined {
  try {
    return findRegistryRoot(cwd);
  } catch {
    return undefined;
  }
}

/**
 * The default store lives under the registry root; with no root (a bare --manifest elsewhere) and
 * no --user-store the feature is off. An explicit relative `sqlite:PATH` starts from the working
 * directory, like every path on the command line.
 */
function userStoreSettings(spec: string | undefined, root: string | undefined, cwd: string): ServeSettings['userStore'] {
  if (spec === undefined && root === undefined) return undefined;
  const base = (spec !== undefined && !/^sqlite:$/i.test(spec) ? cwd : root) ?? cwd;
  try {
    parseUserStoreSpec(spec, base);
  } catch (error) {
    if (isUserStoreError(error, 'invalid-config')) throw new UsageError(error.message);
    throw error;
  }
  return { spec, root: base };
}

function parsePort(value: string | undefined): number {
  if (value === undefined) return DEFAULT_PORT;
  return wholeNumber('--port', value, 0, 65535);
}

/** The bounds on slow and numerous clients (docs/server.md, "Behind a reverse proxy"). */
function parseConnectionLimits(
  maxConnections: string | undefined,
  headersTimeout: string | undefined,
  requestTimeout: string | undefined,
): { maxConnections: number; headersTimeoutMs: number; requestTimeoutMs: number } {
  const limits = {
    maxConnections: maxConnections === undefined ? DEFAULT_MAX_CONNECTIONS : wholeNumber('--max-connections', maxConnections, 1, 100_000),
    headersTimeoutMs: headersTimeout === undefined ? DEFAULT_HEADERS_TIMEOUT_MS : seconds('--headers-timeout', headersTimeout),
    requestTimeoutMs: requestTimeout === undefined ? DEFAULT_REQUEST_TIMEOUT_MS : seconds('--request-timeout', requestTimeout),
  };
  if (limits.requestTimeoutMs < limits.headersTimeoutMs) {
    throw new UsageError(
      `--request-timeout (${limits.requestTimeoutMs / 1000} s) must not be shorter than --headers-timeout (${limits.headersTimeoutMs / 1000} s): the headers are part of the request`,
    );
  }
  return limits;
}

/** A duration in seconds (decimals allowed, e.g. 0.5), from 0.1 s to one hour; returned in milliseconds. */
function seconds(flag: string, value: string): number {
  const number = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value) || number < 0.1 || number > 3_600) {
    throw new UsageError(`${flag} must be a number of seconds from 0.1 to 3600, not "${value}"`);
  }
  return Math.round(number * 1000);
}

function parseOrigins(value: string): string[] {
  return commaList(
    '--allowed-origins',
    value,
    { noun: 'origin', article: 'an', example: 'https://app.example.com', shape: 'scheme://host[:port], no path' },
    (origin) => URL.canParse(origin) && new URL(origin).origin === origin.replace(/\/+$/, '').toLowerCase(),
  );
}

function parseHostNames(value: string): string[] {
  const shape = 'a DNS name or an IP address, without scheme, port or path';
  return commaList(
    '--allowed-hosts',
    value,
    { noun: 'host name', article: 'a', example: 'mcp.example.com', shape },
    (name) => normalizeHostName(name) !== undefined,
  );
}

/** The entries of a comma-separated flag: at least one, each of them one `valid` accepts (else a UsageError naming it). */
function commaList(
  flag: string,
  value: string,
  entry: { noun: string; article: string; example: string; shape: string },
  valid: (entry: string) => boolean,
): string[] {
  const entries = value
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
  if (entries.length === 0) throw new UsageError(`${flag} needs at least one ${entry.noun}, e.g. ${entry.example}`);
  const invalid = entries.find((part) => !valid(part));
  if (invalid !== undefined) throw new UsageError(`${flag}: "${invalid}" is not ${entry.article} ${entry.noun} (${entry.shape})`);
  return entries;
}

/** One line that says why the port could not be bound, without a stack trace. */
function listenFailure(error: NodeJS.ErrnoException, host: string, port: number): string {
  switch (error.code) {
    case 'EADDRINUSE':
      return `port ${port} on ${host} is already in use (pick another with --port, or --port 0 for a free one)`;
    case 'EACCES':
      return `no permission to listen on port ${port} on ${host} (ports below 1024 need privileges; pick another with --port)`;
    case 'EADDRNOTAVAIL':
      return `cannot listen on ${host}: not an address of this machine (see --host)`;
    default:
      return `cannot listen on ${host}:${port}: ${error.code ?? error.message}`;
  }
}

/** `--manifest` for a printed configuration: never a URL whose query or user part may hold a secret. */
function clientManifest(location: string): string {
  if (!isManifestUrl(location) || !URL.canParse(location)) return location;
  const url = new URL(location);
  return url.search !== '' || url.username !== '' || url.password !== '' ? '<your --manifest URL>' : location;
}

/** `--user-store` for a printed configuration: an absolute SQLite path, and never a database password. */
function clientUserStore(spec: string, base: string): string {
  const location = parseUserStoreSpec(spec, base);
  return location.kind === 'sqlite' ? `sqlite:${location.file}` : '<your --user-store postgres:// URL>';
}

/**
 * How to connect an MCP client: over HTTP to this server, or over stdio by starting capreg with
 * node and absolute paths (a desktop client starts from / or $HOME, where `npx capreg` would run
 * whatever the public registry holds under that name).
 */
function connectionHelp(url: string, settings: ServeSettings): string {
  const demo = settings.principalsFile === DEMO_PRINCIPALS_FILE;
  const key = demo ? DEMO_KEY : '<API key>';
  const http = { mcpServers: { capreg: { type: 'http', url, headers: { Authorization: `Bearer ${key}` } } } };
  const stdio = {
    mcpServers: { capreg: { command: process.execPath, args: [CAPREG_BIN, 'serve', ...settings.clientArgs], env: { CAPREG_API_KEY: key } } },
  };
  const keyHelp = demo
    ? `${DEMO_KEY} is a public demo key from ${DEMO_PRINCIPALS_FILE} (it sees every bundled capability and may save user capabilities; the other demo keys are listed there).`
    : `<API key>: the principals file holds only SHA-256 hashes, never keys; use the key whose hash is listed there${settings.jwt ? ', or a JWT from the configured issuer' : ''}.`;
  return [
    'Connect an MCP client over HTTP with this configuration:',
    JSON.stringify(http, null, 2),
    'or let the client start capreg over stdio (absolute paths, so it works from any folder):',
    JSON.stringify(stdio, null, 2),
    keyHelp,
    'A real key is any long random secret (e.g. `openssl rand -hex 32`): add its SHA-256 (`printf %s KEY | sha256sum`) to the principals file and give the key to its holder.',
    '',
  ].join('\n');
}

/**
 * The signals that stop the server the graceful way: SIGINT and SIGTERM, and SIGHUP (the terminal
 * it ran in is gone, or an operator sent it out of habit: the manifest and principals reload by
 * themselves), which Node's default would end at once, without draining or a log line.
 */
const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

function waitForSignal(): { promise: Promise<void>; dispose: () => void } {
  let dispose = (): void => {};
  const promise = new Promise<void>((resolve) => {
    const stop = (): void => resolve();
    for (const signal of STOP_SIGNALS) process.once(signal, stop);
    dispose = () => {
      for (const signal of STOP_SIGNALS) process.off(signal, stop);
    };
  });
  return { promise, dispose };
}

export const serveCommand: Command = async (argv, context) => {
  const settings = parseServeArgs(argv, context);
  // The start lines are for the person starting the server; everything after them is JSON (pino).
  const logger = createLogger({ level: settings.logLevel, destination: { write: (line: string) => context.stderr(line) } });
  const log = lineLogger(logger);

  const userStore = settings.userStore;
  if (userStore === undefined) {
    context.stderr('capreg serve: no registry root, so no user store: user-defined capabilities are off (pass --user-store or --root)\n');
  }

  let auditLog: AuditLog | undefined;
  if (settings.auditLog !== undefined) {
    try {
      auditLog = openAuditLog(settings.auditLog, (message, level = 'error') => logger[level](message));
    } catch (error) {
      context.stderr(`capreg serve: cannot open --audit-log ${settings.auditLog}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}\n`);
      return 2;
    }
  }

  let runtime: Runtime;
  try {
    runtime = await startRuntime({
      manifestFile: settings.manifestFile,
      principalsFile: settings.principalsFile,
      manifestSource: settings.manifestSource,
      toolPrefix: settings.toolPrefix,
      jwt: settings.jwt,
      // Never throws for a database that is down: that is logged, and its calls answer an error.
      openUserStore: userStore ? () => openUserStore(userStore.spec, { root: userStore.root, log }) : undefined,
      userCompile: settings.userCompile,
      log,
      metrics: settings.metrics !== undefined,
      audit: auditLog?.sink,
    });
  } catch (error) {
    await auditLog?.close();
    if (error instanceof LoadError || error instanceof JwtConfigError) {
      // The message names the file; a missing default manifest was already reported with its fix.
      context.stderr(`capreg serve: ${error.message}\n`);
      return 2;
    }
    throw error;
  }

  let metricsServer: MetricsServerHandle | undefined;
  if (runtime.metrics && settings.metrics) {
    const { host, port } = settings.metrics;
    try {
      metricsServer = await startMetricsServer(runtime.metrics, { host, port });
    } catch (error) {
      await runtime.close();
      await auditLog?.close();
      context.stderr(`capreg serve: --metrics-port: cannot listen on ${host}:${port}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}\n`);
      return 2;
    }
    context.stderr(`capreg serve: metrics on ${metricsServer.url}${METRICS_PATH}\n`);
  }

  const health = runtime.health();
  const signal = waitForSignal();
  try {
    if (settings.http) {
      const listen = settings.http;
      const server = await startHttpServer(runtime, { ...listen, log }).catch((error: NodeJS.ErrnoException) => {
        throw new UsageError(listenFailure(error, listen.host, listen.port));
      });
      const url = `${server.url}${MCP_PATH}`;
      context.stderr(
        `capreg serve: ${health.capabilities} capabilities, revision ${health.revision}, on ${url} (health: ${server.url}/healthz)\n${connectionHelp(url, settings)}`,
      );
      await signal.promise;
      log('capreg serve: shutting down');
      await server.close();
    } else {
      const apiKey = context.env['CAPREG_API_KEY'];
      if (apiKey && settings.principalsFile === undefined) {
        log('capreg serve: CAPREG_API_KEY is set but there is no --principals file; the session is unauthenticated');
      }
      const session = await serveStdio(runtime, { apiKey, log });
      context.stderr(`capreg serve: ${health.capabilities} capabilities, revision ${health.revision}, on stdio\n`);
      await Promise.race([signal.promise, session.closed]);
      await session.close();
    }
  } finally {
    signal.dispose();
    await metricsServer?.close();
    await runtime.close();
    await auditLog?.close();
  }
  return 0;
};
