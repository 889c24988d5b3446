// Everything a running server holds apart from its transport: the manifest and principals stores,
// their file watchers, the JWT verifier and the health report. Transports build MCP servers over
// it. No MCP SDK code here.
import type { LineLog } from './log.js';
import type { Catalog } from './catalog.js';
import { createJwtVerifier, type JwksHealth, type JwtOptions, type JwtVerifier } from './auth/jwt.js';
import type { ManifestStore } from './manifest-store.js';
import { openManifestSource, type ManifestSourceOptions } from './manifest-source.js';
import { PrincipalRegistry } from './principals.js';
import { openPrincipalsStore, type PrincipalsStore } from './principals-store.js';
import { toolNames, type ToolNames } from '../compiler/contract.js';
import { UserCapabilities } from './user-capabilities.js';
import type { CompilePoolHealth, UserCompilePoolOptions } from './user-compile-pool.js';
import type { UserCapabilityStore, UserStoreHealth } from './user-store/store.js';
import type { ReadLimits } from './read-file.js';
import type { ReloadOutcome } from './reloadable.js';
import { watchFile, type FileWatch } from './watch.js';
import type { AuditSink } from './audit.js';
import { ServerMetrics } from './metrics.js';
import { loadTokenizer } from '../compiler/tokens.js';

export interface RuntimeOptions {
  /** A file, or an `http(s)://` URL (polled: `manifestSource.remote`). */
  manifestFile: string;
  /** Signature keys and URL polling (docs/server.md, "Signed manifests", "Manifests from a URL"). */
  manifestSource?: Pick<ManifestSourceOptions, 'keys' | 'remote'> | undefined;
  principalsFile?: string | undefined;
  toolPrefix?: string | undefined;
  jwt?: JwtOptions | undefined;
  /**
   * Opens the store of user-defined capabilities (SPEC §8), once the manifest and principals have
   * loaded; the runtime closes it. Absent: the feature is off.
   */
  openUserStore?: (() => Promise<UserCapabilityStore>) | undefined;
  /** Watch the files and reload them on change (default true). */
  watch?: boolean;
  debounceMs?: number;
  /** Interval of the watch's stat safety net (default 1 s). */
  pollMs?: number;
  /** Size and time limits for reading each file (defaults: DEFAULT_READ_LIMITS, PRINCIPALS_READ_LIMITS). */
  readLimits?: { manifest?: ReadLimits; principals?: ReadLimits };
  log?: LineLog;
  /** The pool user saves are compiled in (workers, queue, time budget). */
  userCompile?: UserCompilePoolOptions | undefined;
  /** Keep Prometheus metrics (a registry of this runtime's own); off by default. */
  metrics?: boolean | undefined;
  /** Where audit records go (`--audit-log`); absent: nothing is audited. */
  audit?: AuditSink | undefined;
}

/** `GET /healthz`: nothing secret; a refused reload names the file, not its folder. */
export interface HealthReport {
  status: 'ok' | 'degraded';
  revision: string;
  capabilities: number;
  loadedAt: string;
  lastReloadError: string | null;
  /** Where the served manifest came from: `cache` while a URL that was down at start has not answered yet. */
  source: 'file' | 'url' | 'cache';
  /** The `kid` whose signature was verified on the served manifest; null when unsigned. */
  signedBy: string | null;
  /** Present when the server has a user store; a store outage degrades, never stops, the catalog. */
  userStore?: UserStoreHealth;
  /** Present while the user-capability compile workers cannot start (saves and first loads answer `unavailable`). */
  userCompile?: CompilePoolHealth;
  /** Present with a JWKS URL: `unavailable` while it cannot be fetched, and JWTs are refused (degraded). */
  jwks?: JwksHealth;
}

export interface Runtime {
  names: ToolNames;
  manifests: ManifestStore;
  /** Absent when no principals file was given: then no API key is valid. */
  principalsStore: PrincipalsStore | undefined;
  jwt: JwtVerifier | undefined;
  /** The trusted JWT issuer, announced in the protected-resource metadata. */
  jwtIssuer: string | undefined;
  /** Absent when the server runs without a user store. */
  userCapabilities: UserCapabilities | undefined;
  /** Absent unless metrics were asked for. */
  metrics: ServerMetrics | undefined;
  /** Absent unless an audit log was asked for; transports build one recorder per session or request over it. */
  audit: AuditSink | undefined;
  catalog(this: void): Catalog;
  /** The principals as last checked, without checking the file now (after currentPrincipals, or for a reload's listeners). */
  lastPrincipals(): PrincipalRegistry;
  /**
   * The principals as the file is now, checked off the event loop before each request (HTTP and
   * stdio), so that a revoked key fails on the very next call: undefined when the file could not be
   * checked within PRINCIPALS_CHECK_TIMEOUT_MS (a hung mount), so the caller fails closed.
   */
  currentPrincipals(): Promise<PrincipalRegistry | undefined>;
  health(): HealthReport;
  /** Called after the manifest or the principals changed: what a caller may see may have changed. */
  onChange(listener: () => void): () => void;
  close(): Promise<void>;
}

/** The longest a request waits for the principals file to be checked (stat'ed, read when changed). */
export const PRINCIPALS_CHECK_TIMEOUT_MS = 2_000;
/** The error a request gets when the principals file could not be checked in that time (HTTP: with 503). */
export const PRINCIPALS_UNCHECKED_MESSAGE = 'The principals file could not be checked in time: retry shortly';

/**
 * Loads everything the server needs and starts watching. Throws LoadError (manifest or principals
 * missing or invalid) or JwtConfigError; the caller turns those into exit code 2.
 */
export async function startRuntime(options: RuntimeOptions): Promise<Runtime> {
  const log = options.log ?? (() => {});
  // Listings are priced in tokens (compact-listing.ts): the tokenizer's tables load now, at start,
  // not during the first caller's request (~0.5 s; compiler/tokens.ts loads them on first use).
  loadTokenizer();
  const names = toolNames(options.toolPrefix ?? '');
  // Metrics need the loaded manifest, so polls that run before they exist report to nobody.
  let onPoll: (outcome: ReloadOutcome | 'failed') => void = () => {};
  const source = await openManifestSource({
    location: options.manifestFile,
    names,
    limits: options.readLimits?.manifest,
    log,
    onPoll: (outcome) => onPoll(outcome),
    ...options.manifestSource,
  });
  const manifests = source.store;
  // A start that fails after the manifest source opened must not leave its URL poller running.
  const orClose = async <T>(step: Promise<T>): Promise<T> => {
    try {
      return await step;
    } catch (error) {
      await source.close();
      throw error;
    }
  };
  const principalsStore = options.principalsFile
    ? await orClose(openPrincipalsStore({ file: options.principalsFile, limits: options.readLimits?.principals, log }))
    : undefined;
  const jwt = options.jwt ? await orClose(createJwtVerifier(options.jwt, log)) : undefined;
  const userStore = options.openUserStore ? await orClose(options.openUserStore()) : undefined;
  const metrics = options.metrics
    ? new ServerMetrics({ revision: () => manifests.current.catalog.revision, cachedProjections: () => manifests.current.catalog.cachedProjections })
    : undefined;
  if (metrics) onPoll = (outcome) => metrics.reload(manifests.label, outcome);
  const userCapabilities = userStore
    ? new UserCapabilities({
        store: userStore,
        names,
        ...(options.userCompile ? { compile: options.userCompile } : {}),
        ...(metrics ? { onStoreError: () => metrics.storeError() } : {}),
        log,
      })
    : undefined;

  const listeners = new Set<() => void>();
  const notify = (): void => {
    for (const listener of listeners) listener();
  };
  // find_capabilities' per-capability analysis and index run in the background after each
  // activation (the swap is not delayed), so the first search after a reload does not pay for them;
  // capabilities the reload did not change keep their analysis. A failure there is logged: an
  // unhandled rejection would end the process, at start or on any reload, for every caller; a search
  // then builds what it needs itself, and only that search fails.
  const prepare = (catalog: Catalog, previous?: Catalog): void => {
    catalog.search.prepare(previous?.search).catch((error: unknown) => {
      log(`capreg serve: preparing the search index failed: ${error instanceof Error ? error.message : String(error)}`, 'warn');
    });
  };
  prepare(manifests.current.catalog);
  const unsubscribe = [
    manifests.onActivate(notify),
    manifests.onActivate((next, previous) => prepare(next.value.catalog, previous.value.catalog)),
    ...(principalsStore ? [principalsStore.onActivate(notify)] : []),
  ];

  const watches: FileWatch[] = [];
  if (options.watch ?? true) {
    const watchOptions = {
      log,
      ...(options.debounceMs !== undefined ? { debounceMs: options.debounceMs } : {}),
      ...(options.pollMs !== undefined ? { pollMs: options.pollMs } : {}),
    };
    for (const file of source.watchFiles) {
      watches.push(watchFile(file, () => reloadInBackground(manifests, log, metrics), { ...watchOptions, retryDue: () => manifests.retryDue }));
    }
    if (principalsStore) {
      const retryDue = (): boolean => principalsStore.retryDue;
      watches.push(watchFile(principalsStore.file, () => reloadInBackground(principalsStore, log, metrics), { ...watchOptions, retryDue }));
    }
    await Promise.all(watches.map((watch) => watch.ready));
  }

  return {
    names,
    manifests,
    principalsStore,
    jwt,
    jwtIssuer: options.jwt?.issuer,
    userCapabilities,
    metrics,
    audit: options.audit,
    catalog: () => manifests.current.catalog,
    lastPrincipals: () => principalsStore?.current ?? PrincipalRegistry.empty,
    currentPrincipals: async () => {
      if (!principalsStore) return PrincipalRegistry.empty;
      const outcome = await principalsStore.refresh(PRINCIPALS_CHECK_TIMEOUT_MS);
      return outcome === 'timeout' ? undefined : principalsStore.current;
    },
    health: () => {
      const snapshot = manifests.snapshot;
      const errors = [manifests.lastReloadError, principalsStore?.lastReloadError, principalsStore?.uncheckedError].filter((error) => error != null);
      const lastReloadError = errors.length > 0 ? errors.join('; ') : null;
      const store = userStore?.health();
      const compile = userCapabilities?.compileHealth();
      const compileFailing = compile !== undefined && compile.status !== 'ok';
      const jwks = jwt?.jwksHealth();
      const healthy =
        lastReloadError === null && (store === undefined || store.status === 'ok') && !compileFailing && (jwks === undefined || jwks.status === 'ok');
      return {
        status: healthy ? 'ok' : 'degraded',
        revision: snapshot.value.manifest.revision,
        capabilities: snapshot.value.catalog.size,
        loadedAt: snapshot.loadedAt,
        lastReloadError,
        source: snapshot.value.source ?? 'file',
        signedBy: snapshot.value.signedBy ?? null,
        ...(store ? { userStore: store } : {}),
        ...(compileFailing ? { userCompile: compile } : {}),
        ...(jwks ? { jwks } : {}),
      };
    },
    onChange: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close: async () => {
      for (const stop of unsubscribe) stop();
      listeners.clear();
      await Promise.all(watches.map((watch) => watch.close()));
      await source.close();
      await userCapabilities?.close();
      await userStore?.close();
    },
  };
}

/** Reload outcomes are logged by the store; a failure of the reload itself must not go unhandled. */
function reloadInBackground(file: ManifestStore | PrincipalsStore, log: LineLog, metrics: ServerMetrics | undefined): void {
  file.reload().then(
    (outcome) => metrics?.reload(file.label, outcome),
    (error: unknown) => {
      metrics?.reload(file.label, 'failed');
      log(`capreg serve: ${file.label} reload failed: ${error instanceof Error ? error.message : String(error)}`, 'warn');
    },
  );
}
