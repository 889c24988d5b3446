// Where a verified manifest comes from, the way OPA takes in signed bundles: a local file with its
// detached signature beside it, or a URL polled with `If-None-Match` (the signature at the same URL
// with `.sig` appended), optionally persisted to a cache folder to boot from when the URL is down.
// Each new version is read as one manifest+signature pair, verified (signature, then shape,
// `schemaVersion`, `integrity`) off to the side and activated in one step; on any failure the last
// good version keeps serving and `lastReloadError` says why. An unsigned local manifest keeps the
// plain ReloadableFile path (manifest-store.ts). No MCP SDK code here.
import { createHash } from 'node:crypto';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { fetch } from 'undici';
import { removeStaleTemporaries, writeFilesAtomic } from './atomic-write.js';
import type { ToolNames } from '../compiler/contract.js';
import { shownName } from '../compiler/manifest.js';
import { displayUrl } from './display-url.js';
import { RedirectGuard, type Resolve } from './redirect-guard.js';
import { isLoopbackHost } from './loopback.js';
import type { LineLog } from './log.js';
import { openManifestStore, servedManifestFromText, type ManifestStore, type ServedManifest } from './manifest-store.js';
import { DEFAULT_READ_LIMITS, readBounded, statIdentity, TIMED_OUT, TimeoutRetry, type ReadLimits } from './read-file.js';
import { LoadError, type ParseResult, type ReloadOutcome, type Snapshot } from './reloadable.js';
import { MANIFEST_SIGNATURE_SUFFIX, MAX_SIGNATURE_BYTES, verifyDetached, type VerificationKeys } from './signature.js';

/** Redirects followed at most for one fetch (as curl's and most clients' defaults, far lower). */
export const MAX_REDIRECTS = 5;
export const DEFAULT_POLL_INTERVAL_MS = 30_000;
/** One fetch (headers and body, redirects included) must finish within this. */
export const DEFAULT_FETCH_LIMITS: ReadLimits = { maxBytes: DEFAULT_READ_LIMITS.maxBytes, timeoutMs: 10_000 };
/**
 * A manifest and its signature are two files (or two URLs) replaced one after the other; a read
 * between the two sees a mismatched pair. A pair that fails its signature is read again this many
 * times, this far apart, before it is refused.
 */
const PAIR_ATTEMPTS = 3;
const PAIR_RETRY_MS = 150;
/** Each wait between polls is 90–100% of the interval, so a fleet does not poll in step. */
const POLL_JITTER = 0.1;

export type ManifestOrigin = 'file' | 'url' | 'cache';

export interface RemoteOptions {
  pollIntervalMs?: number;
  /** Folder the activated manifest and signature are persisted to, and booted from. */
  cacheDir?: string | undefined;
  /** Allow `http://` to a host other than loopback. */
  allowInsecure?: boolean;
  fetchLimits?: ReadLimits;
}

export interface ManifestSourceOptions {
  /** A file path, or an `http(s)://` URL. */
  location: string;
  names: ToolNames;
  /** When given, a manifest is activated only with a valid signature by one of these keys. */
  keys?: VerificationKeys | undefined;
  remote?: RemoteOptions | undefined;
  limits?: ReadLimits | undefined;
  log?: LineLog;
  /** Told the outcome of every poll of a URL (file reloads are reported by whoever triggers them). */
  onPoll?: (outcome: ReloadOutcome | 'failed') => void;
}

/** The store, the files whose changes should reload it, and how to stop its polling. */
export interface ManifestSource {
  store: ManifestStore;
  watchFiles: string[];
  close(): Promise<void>;
}

export function isManifestUrl(location: string): boolean {
  return /^https?:\/\//i.test(location);
}

/**
 * Why this manifest URL may not be fetched, or undefined when it may: `https://`, or `http://` on
 * loopback, or anywhere with `allowInsecure` (a plain-HTTP manifest can be swapped on the way).
 */
export function urlRefusal(url: URL, allowInsecure: boolean): string | undefined {
  // fetch() refuses them anyway, with an error that quotes the whole URL, password included.
  if (url.username !== '' || url.password !== '') return 'a URL with a user name or password (user:password@) is not fetched';
  if (url.protocol === 'https:') return undefined;
  // Cut: a redirect's Location is the answering server's text, and the reason goes to /healthz.
  if (url.protocol !== 'http:') return `only https:// (or http:// on loopback) is fetched, not ${shownName(url.protocol)}`;
  if (allowInsecure || isLoopbackHost(url.hostname)) return undefined;
  return 'http:// is allowed only on loopback (use https://, or --allow-insecure-manifest-url)';
}

/** An entity tag without its weak marker: a proxy that compresses may turn `"x"` into `W/"x"`. */
function opaqueTag(etag: string): string {
  return etag.trim().replace(/^W\//, '');
}

/** `text` with each URL in it as `displayUrl` shows it: an error message may quote a URL whole. */
function withoutUrlSecrets(text: string): string {
  return text.replace(/\b[a-z][a-z0-9+.-]*:\/\/\S+/gi, (match) => (URL.canParse(match) ? displayUrl(new URL(match)) : '<URL>'));
}

export function signatureUrl(url: URL): URL {
  const next = new URL(url.href);
  next.pathname = `${next.pathname}${MANIFEST_SIGNATURE_SUFFIX}`;
  return next;
}

export async function openManifestSource(options: ManifestSourceOptions): Promise<ManifestSource> {
  const log = options.log ?? (() => {});
  if (!isManifestUrl(options.location) && options.keys === undefined) {
    const store = await openManifestStore({ file: options.location, names: options.names, limits: options.limits, log });
    return { store, watchFiles: [store.file], close: async () => {} };
  }
  if (!isManifestUrl(options.location)) {
    const file = options.location;
    const store = await VerifiedManifestStore.open({
      ...options,
      log,
      origin: 'file',
      label: 'manifest',
      file,
      read: () => readFilePair(file, options.limits ?? DEFAULT_READ_LIMITS),
    });
    return { store, watchFiles: [file, `${file}${MANIFEST_SIGNATURE_SUFFIX}`], close: async () => {} };
  }
  return openRemote(options, log);
}

// ---------------------------------------------------------------------------------------------
// Reading a pair

type PairRead =
  | { ok: true; bytes: Buffer; signature: string | undefined; etag?: string | undefined }
  | { ok: true; notModified: true }
  | { ok: false; reason: string; unreachable?: boolean; timedOut?: boolean };

/** The manifest and its `.sig` as one pair: a manifest replaced while the two were read is read again. */
async function readFilePair(file: string, limits: ReadLimits): Promise<PairRead> {
  const signatureFile = `${file}${MANIFEST_SIGNATURE_SUFFIX}`;
  for (let attempt = 0; ; attempt++) {
    const manifest = await readBounded(file, limits);
    if (!manifest.ok) return { ok: false, reason: `cannot read it: ${manifest.reason}`, timedOut: manifest.identity === TIMED_OUT };
    const signature = await readBounded(signatureFile, { maxBytes: MAX_SIGNATURE_BYTES, timeoutMs: limits.timeoutMs });
    const after = await statIdentity(file);
    if (after !== manifest.identity && attempt + 1 < PAIR_ATTEMPTS) {
      await sleep(PAIR_RETRY_MS);
      continue;
    }
    if (!signature.ok && !signature.identity.startsWith('missing:ENOENT')) {
      return { ok: false, reason: `cannot read its signature: ${signature.reason}`, timedOut: signature.identity === TIMED_OUT };
    }
    return { ok: true, bytes: Buffer.from(manifest.text, 'utf8'), signature: signature.ok ? signature.text : undefined };
  }
}

type FetchResult =
  { ok: true; status: 200; bytes: Buffer; etag: string | undefined } | { ok: true; status: 304 } | { ok: false; status?: number; reason: string };

/**
 * GET within limits: at most MAX_REDIRECTS redirects, never from https to http nor inward to an
 * internal address, judged by the address each host resolves to (server/redirect-guard.ts), every
 * hop checked like the first URL; a 304 only as the
 * answer to the `etag` sent (one to a request that sent none, or naming another ETag, is a failed
 * fetch: taken as "unchanged" it would vouch for a version never received); the whole exchange
 * (body included) within `limits.timeoutMs`; a body over `limits.maxBytes` is cut off and refused.
 */
export async function fetchBounded(
  url: URL,
  options: { limits: ReadLimits; allowInsecure: boolean; etag?: string | undefined; signal?: AbortSignal; resolve?: Resolve | undefined },
): Promise<FetchResult> {
  const timeout = AbortSignal.timeout(options.limits.timeoutMs);
  const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
  const headers: Record<string, string> = { accept: 'application/json' };
  if (options.etag !== undefined) headers['if-none-match'] = options.etag;
  let current = url;
  let from: URL | undefined;
  const guard = new RedirectGuard(options.resolve);
  try {
    for (let hops = 0; ; hops++) {
      const inward = guard.hop(current, from);
      if (inward !== undefined) return refusedInward(inward);
      const refused = urlRefusal(current, options.allowInsecure);
      if (refused !== undefined) return { ok: false, reason: `refused a redirect: ${refused}` };
      const response = await fetch(current, { headers, redirect: 'manual', signal, dispatcher: guard.dispatcher });
      const location = response.headers.get('location');
      if (response.status >= 300 && response.status < 400 && response.status !== 304 && location !== null) {
        await response.body?.cancel();
        if (hops >= MAX_REDIRECTS) return { ok: false, reason: `more than ${MAX_REDIRECTS} redirects` };
        const next = new URL(location, current);
        if (current.protocol === 'https:' && next.protocol !== 'https:') return { ok: false, reason: 'refused a redirect from https to http' };
        from = current;
        current = next;
        continue;
      }
      if (response.status === 304) {
        await response.body?.cancel();
        const unasked = '304 Not Modified';
        if (options.etag === undefined) return { ok: false, status: 304, reason: `the server answered ${unasked} to a request without If-None-Match` };
        const answered = response.headers.get('etag');
        if (answered !== null && opaqueTag(answered) !== opaqueTag(options.etag)) {
          return { ok: false, status: 304, reason: `the server answered ${unasked} with another ETag than the one sent` };
        }
        return { ok: true, status: 304 };
      }
      if (response.status !== 200) {
        await response.body?.cancel();
        return { ok: false, status: response.status, reason: `the server answered HTTP ${response.status}` };
      }
      const declared = Number(response.headers.get('content-length') ?? NaN);
      if (declared > options.limits.maxBytes) {
        await response.body?.cancel();
        return { ok: false, reason: `it is ${declared} bytes, over the limit of ${options.limits.maxBytes}` };
      }
      const chunks: Uint8Array[] = [];
      let total = 0;
      if (response.body) {
        // undici's own fetch types its body's chunks loosely; they are bytes.
        const reader = (response.body as ReadableStream<Uint8Array>).getReader();
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          total += value.byteLength;
          if (total > options.limits.maxBytes) {
            await reader.cancel();
            return { ok: false, reason: `it is over the limit of ${options.limits.maxBytes} bytes` };
          }
          chunks.push(value);
        }
      }
      return { ok: true, status: 200, bytes: Buffer.concat(chunks, total), etag: response.headers.get('etag') ?? undefined };
    }
  } catch (error) {
    const inward = guard.refusal();
    if (inward !== undefined) return refusedInward(inward);
    if (timeout.aborted) return { ok: false, reason: `no complete answer within ${options.limits.timeoutMs} ms` };
    if (options.signal?.aborted) return { ok: false, reason: 'the server is shutting down' };
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    return { ok: false, reason: `it could not be fetched (${cause ?? withoutUrlSecrets((error as Error).message)})` };
  } finally {
    await guard.close();
  }
}

/** A redirect the guard refused, before the request (a literal address) or at its look-up (a name). */
function refusedInward(why: string): FetchResult {
  return { ok: false, reason: `refused a redirect ${why}` };
}

async function readUrlPair(
  url: URL,
  options: { limits: ReadLimits; allowInsecure: boolean; etag: string | undefined; signed: boolean; signal: AbortSignal },
): Promise<PairRead> {
  const manifest = await fetchBounded(url, options);
  if (!manifest.ok) return { ok: false, reason: `cannot fetch it: ${manifest.reason}`, unreachable: true };
  if (manifest.status === 304) return { ok: true, notModified: true };
  if (!options.signed) return { ok: true, bytes: manifest.bytes, signature: undefined, etag: manifest.etag };
  const signature = await fetchBounded(signatureUrl(url), { ...options, etag: undefined, limits: { ...options.limits, maxBytes: MAX_SIGNATURE_BYTES } });
  if (!signature.ok && signature.status !== 404) return { ok: false, reason: `cannot fetch its signature: ${signature.reason}`, unreachable: true };
  return {
    ok: true,
    bytes: manifest.bytes,
    signature: signature.ok && signature.status === 200 ? signature.bytes.toString('utf8') : undefined,
    etag: manifest.etag,
  };
}

// ---------------------------------------------------------------------------------------------
// The store

interface VerifiedOptions {
  names: ToolNames;
  keys?: VerificationKeys | undefined;
  log: LineLog;
  label: string;
  /** What messages call it: a path, or a URL without its query. */
  file: string;
  origin: ManifestOrigin;
  read: () => Promise<PairRead>;
  /** Called with every activated pair (the cache). */
  persist?: ((bytes: Buffer, signature: string | undefined) => Promise<void>) | undefined;
}

type Decision =
  | { kind: 'activate'; served: ServedManifest; digest: string; bytes: Buffer; signature: string | undefined; etag: string | undefined }
  | { kind: 'refuse'; reason: string; digest: string; timedOut?: boolean }
  | { kind: 'same'; etag: string | undefined }
  | { kind: 'not-modified' };

export class VerifiedManifestStore implements ManifestStore {
  #options: VerifiedOptions;
  #snapshot: Snapshot<ServedManifest>;
  #etag: string | undefined;
  #lastReloadError: string | null = null;
  #lastAttemptDigest: string;
  /** The last read of a file timed out (see ReloadableFile.retryDue). */
  readonly #retry = new TimeoutRetry();
  #queue: Promise<unknown> = Promise.resolve();
  readonly #listeners = new Set<(next: Snapshot<ServedManifest>, previous: Snapshot<ServedManifest>) => void>();

  private constructor(options: VerifiedOptions, decided: Extract<Decision, { kind: 'activate' }>) {
    this.#options = options;
    this.#snapshot = { value: decided.served, loadedAt: new Date().toISOString() };
    this.#etag = decided.etag;
    this.#lastAttemptDigest = decided.digest;
  }

  /** First load: a pair that cannot be read or verified is a LoadError (the server must not start on it). */
  static async open(options: VerifiedOptions): Promise<VerifiedManifestStore> {
    const decided = await readAndVerify(options, undefined);
    if (decided.kind !== 'activate') {
      throw new LoadError('invalid', `${options.label} ${options.file} refused: ${decided.kind === 'refuse' ? decided.reason : 'nothing to load'}`);
    }
    const store = new VerifiedManifestStore(options, decided);
    await store.#persist(decided);
    return store;
  }

  get file(): string {
    return this.#options.file;
  }

  get label(): string {
    return this.#options.label;
  }

  get snapshot(): Snapshot<ServedManifest> {
    return this.#snapshot;
  }

  get current(): ServedManifest {
    return this.#snapshot.value;
  }

  get lastReloadError(): string | null {
    return this.#lastReloadError;
  }

  get retryDue(): boolean {
    return this.#retry.due([this.file, `${this.file}${MANIFEST_SIGNATURE_SUFFIX}`]);
  }

  /** The ETag the served version was fetched with (for `If-None-Match`), if any. */
  get etag(): string | undefined {
    return this.#etag;
  }

  onActivate(listener: (next: Snapshot<ServedManifest>, previous: Snapshot<ServedManifest>) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Booted from the cache: from now on, updates come from the URL (same snapshot, same listeners). */
  retarget(options: VerifiedOptions): void {
    this.#options = options;
  }

  /** Read the pair again; reloads run one at a time, in order. */
  reload(): Promise<ReloadOutcome> {
    const run = this.#queue.then(() => this.#reloadNow());
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async #reloadNow(): Promise<ReloadOutcome> {
    const decided = await readAndVerify(this.#options, this.#lastAttemptDigest);
    this.#retry.record(decided.kind === 'refuse' && decided.timedOut === true);
    switch (decided.kind) {
      case 'not-modified':
        // A 304 counts only as the answer to the served version's ETag (fetchBounded): what is
        // served is what is published.
        this.#lastReloadError = null;
        return 'unchanged';
      case 'same':
        // The bytes served, republished under a new ETag (a rebuild, an mtime-based ETag): asked
        // with the new one, the next poll costs a 304. Not so for bytes that were refused.
        if (this.#lastReloadError === null) this.#etag = decided.etag;
        return 'unchanged';
      case 'refuse':
        this.#lastAttemptDigest = decided.digest;
        // A refused URL version is fetched in full next time: a corrected signature may follow it.
        if (decided.digest !== '') this.#etag = undefined;
        this.#refuse(decided.reason);
        return 'rejected';
    }
    const previous = this.#snapshot;
    const next = { value: decided.served, loadedAt: new Date().toISOString() };
    this.#snapshot = next;
    this.#etag = decided.etag;
    this.#lastAttemptDigest = decided.digest;
    this.#lastReloadError = null;
    const by = decided.served.signedBy !== undefined ? ` signed by ${decided.served.signedBy}` : '';
    this.#options.log(`capreg serve: ${this.label} reloaded, revision ${decided.served.manifest.revision}${by}, from ${this.file}`);
    await this.#persist(decided);
    for (const listener of this.#listeners) {
      try {
        listener(next, previous);
      } catch (error) {
        this.#options.log(`capreg serve: listener after ${this.label} reload failed: ${(error as Error).message}`, 'warn');
      }
    }
    return 'activated';
  }

  #refuse(reason: string): void {
    const at = new Date().toISOString();
    const still = `still serving revision ${this.#snapshot.value.manifest.revision} loaded at ${this.#snapshot.loadedAt}`;
    // /healthz is unauthenticated: it names the file, not its folder or the URL's host.
    this.#lastReloadError = `${this.label} reload rejected at ${at} (${path.basename(this.file)}): ${reason}; ${still}`;
    this.#options.log(`capreg serve: ${this.label} reload rejected (${this.file}): ${reason}; ${still}`, 'warn');
  }

  async #persist(decided: Extract<Decision, { kind: 'activate' }>): Promise<void> {
    if (!this.#options.persist) return;
    try {
      await this.#options.persist(decided.bytes, decided.signature);
    } catch (error) {
      this.#options.log(
        `capreg serve: could not persist the manifest to the cache: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
        'warn',
      );
    }
  }
}

/**
 * Read a pair and decide on it: the signature first (over the exact bytes that will be served),
 * then the manifest's own checks. A signature failure is read again a few times: a pair read
 * between the two renames of a publish is mismatched, not tampered.
 */
async function readAndVerify(options: VerifiedOptions, lastDigest: string | undefined): Promise<Decision> {
  let refused: Decision | undefined;
  for (let attempt = 0; attempt < PAIR_ATTEMPTS; attempt++) {
    if (attempt > 0) await sleep(PAIR_RETRY_MS);
    const pair = await options.read();
    if (!pair.ok) return { kind: 'refuse', reason: pair.reason, digest: '', timedOut: pair.timedOut === true };
    if ('notModified' in pair) return { kind: 'not-modified' };
    // The origin is part of it: the same manifest from the URL replaces the cache's copy.
    const digest = createHash('sha256')
      .update(options.origin)
      .update('\0')
      .update(pair.bytes)
      .update('\0')
      .update(pair.signature ?? '')
      .digest('hex');
    if (digest === lastDigest) return { kind: 'same', etag: pair.etag };
    let signedBy: string | undefined;
    if (options.keys) {
      const verified = await verifyDetached(pair.bytes, pair.signature, options.keys);
      if (!verified.ok) {
        refused = { kind: 'refuse', reason: `signature refused: ${verified.reason}`, digest };
        continue;
      }
      signedBy = verified.kid;
    }
    const parsed = checked(() => servedManifestFromText(pair.bytes.toString('utf8'), options.names));
    if (!parsed.ok) return { kind: 'refuse', reason: parsed.error, digest };
    const served: ServedManifest = { ...parsed.value, source: options.origin, ...(signedBy !== undefined ? { signedBy } : {}) };
    return { kind: 'activate', served, digest, bytes: pair.bytes, signature: pair.signature, etag: pair.etag };
  }
  return refused as Decision;
}

/** A check that throws (a bug, or a limit it ran into) refuses the manifest; it never escapes a reload. */
function checked<T>(check: () => ParseResult<T>): ParseResult<T> {
  try {
    return check();
  } catch (error) {
    return { ok: false, error: `could not be checked (${error instanceof Error ? error.name : 'error'})` };
  }
}

// ---------------------------------------------------------------------------------------------
// A manifest URL

async function openRemote(options: ManifestSourceOptions, log: LineLog): Promise<ManifestSource> {
  const url = new URL(options.location);
  const remote = options.remote ?? {};
  const allowInsecure = remote.allowInsecure ?? false;
  const refused = urlRefusal(url, allowInsecure);
  if (refused !== undefined) throw new LoadError('unreadable', `manifest URL ${displayUrl(url)}: ${refused}`);
  const limits = remote.fetchLimits ?? DEFAULT_FETCH_LIMITS;
  const pollMs = remote.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
  const cacheFile = remote.cacheDir !== undefined ? path.join(remote.cacheDir, 'manifest.json') : undefined;
  const closing = new AbortController();
  let store: VerifiedManifestStore | undefined;
  let unreachable: string | undefined;

  const persist = cacheFile
    ? async (bytes: Buffer, signature: string | undefined): Promise<void> => {
        const signatureFile = `${cacheFile}${MANIFEST_SIGNATURE_SUFFIX}`;
        if (signature === undefined) await rm(signatureFile, { force: true });
        // The signature first, as `capreg build` writes them: a crash between the renames leaves a
        // pair that fails verification, never one that passes it wrongly.
        await writeFilesAtomic([...(signature !== undefined ? [{ target: signatureFile, content: signature }] : []), { target: cacheFile, content: bytes }]);
      }
    : undefined;
  const read = async (): Promise<PairRead> => {
    const pair = await readUrlPair(url, { limits, allowInsecure, etag: store?.etag, signed: options.keys !== undefined, signal: closing.signal });
    unreachable = !pair.ok && pair.unreachable === true ? pair.reason : undefined;
    return pair;
  };
  const fromUrl: VerifiedOptions = { names: options.names, keys: options.keys, log, label: 'manifest', file: displayUrl(url), origin: 'url', read, persist };

  // A replica killed while persisting (SIGKILL, the OOM killer, a restart loop) left a temporary
  // file as large as the manifest; nothing else ever removes it. Those of live replicas sharing the
  // folder are left alone.
  if (cacheFile !== undefined) await removeStaleTemporaries([cacheFile, `${cacheFile}${MANIFEST_SIGNATURE_SUFFIX}`]);
  try {
    store = await VerifiedManifestStore.open(fromUrl);
  } catch (error) {
    if (!(error instanceof LoadError) || unreachable === undefined || cacheFile === undefined) throw error;
    // OPA's persisted bundle: the URL is down at start, so serve the last copy that was verified,
    // if it still verifies now; polling goes on and replaces it.
    log(`capreg serve: manifest URL ${displayUrl(url)} unreachable at start (${unreachable}); booting from the cache ${cacheFile}`, 'warn');
    try {
      store = await VerifiedManifestStore.open({
        ...fromUrl,
        origin: 'cache',
        file: cacheFile,
        persist: undefined,
        read: () => readFilePair(cacheFile, options.limits ?? DEFAULT_READ_LIMITS),
      });
    } catch (cacheError) {
      throw new LoadError('unreadable', `${error.message}; the cache cannot stand in: ${(cacheError as Error).message}`);
    }
    store.retarget(fromUrl);
  }
  const served = store;

  let timer: NodeJS.Timeout | undefined;
  let polling: Promise<unknown> = Promise.resolve();
  let closed = false;
  const schedule = (): void => {
    if (closed) return;
    timer = setTimeout(
      () => {
        polling = served
          .reload()
          .then(
            (outcome) => options.onPoll?.(outcome),
            (error: unknown) => {
              options.onPoll?.('failed');
              log(`capreg serve: manifest poll failed: ${(error as Error).message}`, 'warn');
            },
          )
          .finally(schedule);
      },
      pollMs * (1 - POLL_JITTER * Math.random()),
    );
    timer.unref();
  };
  schedule();
  return {
    store: served,
    watchFiles: [],
    close: async () => {
      closed = true;
      clearTimeout(timer);
      closing.abort();
      await polling;
    },
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
