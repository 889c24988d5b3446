// Structured logs (docs/server.md, "Metrics and logs"): one JSON object per line on stderr, since
// stdout belongs to the protocol on stdio. Nothing secret may reach them: known secret fields are
// redacted, request headers are never logged, and every message is scrubbed of credentials that a
// library's error text may carry (a database URL's password, a bearer token).
import { pino, type Logger } from 'pino';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const DEFAULT_LOG_LEVEL: LogLevel = 'info';

export function isLogLevel(value: string): value is LogLevel {
  return (LOG_LEVELS as readonly string[]).includes(value);
}

/** Fields that may hold a credential, wherever a caller of the logger puts them. */
const REDACT_PATHS = [
  'authorization',
  'headers',
  'apiKey',
  'token',
  'password',
  'databaseUrl',
  '*.authorization',
  '*.headers',
  '*.apiKey',
  '*.token',
  '*.password',
  '*.databaseUrl',
];

// `scheme://user:password@host` → `scheme://user:***@host`; `?password=…` (and `sslpassword`, which
// pg and libpq take from a URL's query; the PostgreSQL store masks its URLs with it too) → `?password=***`;
// `Bearer <token>` → `Bearer ***`.
const URL_PASSWORD = /(\b[a-z][a-z0-9+.-]*:\/\/[^\s:/@]*:)[^\s@/]*@/gi;
export const QUERY_PASSWORD = /([?&](?:ssl)?password=)[^&#\s]*/gi;
// A token is token68 (RFC 7235): letters, digits and -._~+/ then padding.
const BEARER = /\b(Bearer\s+)[A-Za-z0-9\-._~+/]+=*/gi;

export function scrubSecrets(text: string): string {
  return text.replace(URL_PASSWORD, '$1***@').replace(QUERY_PASSWORD, '$1***').replace(BEARER, '$1***');
}

export interface LogOptions {
  level?: LogLevel;
  /** Where lines go (default: stderr, written synchronously so that a crash loses nothing). */
  destination?: { write(line: string): unknown };
}

export function createLogger(options: LogOptions = {}): Logger {
  return pino(
    {
      level: options.level ?? DEFAULT_LOG_LEVEL,
      base: { name: 'capreg' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      formatters: { level: (label) => ({ level: label }) },
      hooks: {
        logMethod(args, method) {
          method.apply(this, args.map((arg) => (typeof arg === 'string' ? scrubSecrets(arg) : arg)) as Parameters<typeof method>);
        },
      },
    },
    options.destination ?? pino.destination({ dest: 2, sync: true }),
  );
}

/**
 * Where the server's parts say what happened: `warn` for what an operator must look at (a refused
 * reload, a store outage that starts), `info` (the default) otherwise.
 */
export type LineLog = (line: string, level?: 'info' | 'warn') => void;

/**
 * The `(line) => void` callback the server's parts log through, as structured records: the line is
 * the message, minus the `capreg serve: ` prefix that plain stderr lines carried, at the level the
 * part gives (`info` by default).
 */
export function lineLogger(logger: Logger): LineLog {
  return (line, level = 'info') => logger[level](line.replace(/^capreg (serve|user store): /, ''));
}
