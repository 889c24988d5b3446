// User-defined capabilities as the server serves them (SPEC §8): saving (compiled against what the
// author can see now, then stored), deleting, and the owner's view of them, decided on every call:
// a user capability is listed and served to its owner only while every capability it links to is
// visible to that owner now. Nothing is cached across calls except rendered protocols keyed by
// revision (a revision never changes content), so replicas sharing one database agree at once.
// No MCP SDK code here; the tools are thin adapters over this.
import { LRUCache } from 'lru-cache';
import { digestOf } from '../compiler/canonical.js';
import { catalogEntry, type CatalogEntry, type ToolNames } from '../compiler/contract.js';
import type { Diagnostic } from '../compiler/types.js';
import { DEFAULT_MAX_USER_MARKDOWN_BYTES } from '../compiler/user/compile-user.js';
import type { Catalog, CatalogListing } from './catalog.js';
import type { Caller } from './identity.js';
import type { Grants } from './permissions.js';
import type { LineLog } from './log.js';
import { UserCompilePool, type CompilePoolHealth, type RenderOutcome, type UserCompilePoolOptions } from './user-compile-pool.js';
import {
  isUserStoreError,
  type ToolBinding,
  LimitExceededError,
  StaleRevisionError,
  USER_ID_PATTERN,
  type UserCapabilityData,
  type UserCapabilityRecord,
  type UserCapabilityStore,
  type UserCapabilitySummary,
} from './user-store/store.js';

/**
 * The scope `user-capabilities:write` lets a caller save and delete their own user capabilities.
 * Scopes rank read < write < admin, so it includes `user-capabilities:read`, which is what listing
 * and loading one's own user capabilities takes: a caller without either never costs a store query.
 */
export const USER_CAPABILITIES_TOOLSET = 'user-capabilities';
export const USER_CAPABILITIES_WRITE_SCOPE = `${USER_CAPABILITIES_TOOLSET}:write`;

/** A `list_capabilities` row for a user capability. `protocolVersion` is its (opaque) revision. */
export interface UserCatalogEntry extends CatalogEntry {
  isUserDefined: true;
}

/** A user capability the caller may load now. */
export interface ServedUserCapability {
  id: string;
  revision: string;
  updatedAt: string;
  /** The workflow as served: `capability:` links rendered as catalog instructions. */
  protocol: string;
  /** Delivered: the capabilities the workflow links to, sorted. */
  dependencies: readonly string[];
  toolBindings: readonly ToolBinding[];
}

/** A diagnostic as a tool result carries it. */
export interface ToolDiagnostic {
  ruleId: string;
  severity: Diagnostic['severity'];
  message: string;
  line: number;
  column: number;
}

/** Known failures, each with a message that says what to do; none carries a secret. */
export type UserCapabilityFailureCode =
  'forbidden' | 'invalid-arguments' | 'stale-revision' | 'limit-exceeded' | 'store-unavailable' | 'busy' | 'unavailable' | 'cancelled';

export type SaveOutcome =
  | { kind: 'saved'; capabilityId: string; revision: string; warnings: ToolDiagnostic[]; omitted: number }
  /** `omitted`: how many more the rules reported past MAX_TOOL_DIAGNOSTICS (errors are kept first). */
  | { kind: 'invalid'; diagnostics: ToolDiagnostic[]; omitted: number }
  /** Not the caller's, or no such id: answered with the uniform error. */
  | { kind: 'not-accessible' }
  | { kind: 'failed'; code: UserCapabilityFailureCode; message: string };

export type DeleteOutcome = { kind: 'deleted' } | { kind: 'not-accessible' } | { kind: 'failed'; code: UserCapabilityFailureCode; message: string };

export type LoadOutcome =
  | { kind: 'found'; capability: ServedUserCapability }
  | { kind: 'not-accessible' }
  | { kind: 'failed'; code: 'store-unavailable' | 'busy' | 'limit-exceeded' | 'unavailable'; message: string };

/** What one caller sees: the platform listing (shared by the caller's class) plus their own entries. */
export interface CallerListing {
  platform: CatalogListing;
  /** The caller's visible user capabilities, sorted by id; empty for most callers. */
  user: readonly UserCatalogEntry[];
  /** Equal to `platform.catalogVersion` when `user` is empty. */
  catalogVersion: string;
  /** Set when the store did not answer: the platform listing is still served. */
  unavailable?: string;
}

export interface UserCapabilitiesOptions {
  store: UserCapabilityStore;
  names: ToolNames;
  /** Largest Markdown accepted, in UTF-8 bytes (default 64 KiB). */
  maxMarkdownBytes?: number;
  /** The worker pool saves are compiled in (workers, queue, time budget). */
  compile?: UserCompilePoolOptions;
  /** Called for every call the store could not answer (counted in the metrics). */
  onStoreError?: () => void;
  /** The server's log: told when the compile workers stop starting, and start again. */
  log?: LineLog;
}

export const STORE_UNAVAILABLE_MESSAGE =
  'user-defined capabilities are unavailable right now (the user store does not answer); the platform catalog still works, try again later';

export const BUSY_MESSAGE = 'the server is checking too many user capabilities right now; save again in a few seconds';
export const LOAD_BUSY_MESSAGE = 'the server is preparing too many user capabilities right now; load it again in a few seconds';
/** Never seen by the caller: the request was cancelled, or its connection closed, so nothing answers it. */
const CANCELLED_MESSAGE = 'the save was cancelled before it was stored; nothing was stored';
export const COMPILE_UNAVAILABLE_MESSAGE =
  'user-defined capabilities cannot be checked right now (the server cannot start the worker that checks them); the platform catalog still works, try again later';
const FORBIDDEN_MESSAGE = `saving or deleting user capabilities needs the scope ${USER_CAPABILITIES_WRITE_SCOPE}`;
/**
 * Rendered protocols kept: at most 512, and at most 16 M characters together. A protocol can render
 * to ~9 times its Markdown (a link per paragraph), and each save adds a revision: by count alone, one
 * author saving again and again could hold 64–128 MB of every replica.
 */
export const RENDERED_CACHE = { max: 512, maxChars: 16 * 1024 * 1024 };

/** The cache of rendered protocols, by `id\nrevision`. */
export function renderedCache(): LRUCache<string, string> {
  return new LRUCache<string, string>({
    max: RENDERED_CACHE.max,
    maxSize: RENDERED_CACHE.maxChars,
    sizeCalculation: (protocol) => Math.max(1, protocol.length),
  });
}

export function isUserCapabilityId(id: unknown): id is string {
  return typeof id === 'string' && USER_ID_PATTERN.test(id);
}

export function mayReadUserCapabilities(caller: Caller): caller is Extract<Caller, { authenticated: true }> {
  return caller.authenticated && caller.grants.allows(USER_CAPABILITIES_TOOLSET, 'read');
}

export function mayWriteUserCapabilities(caller: Caller): caller is Extract<Caller, { authenticated: true }> {
  return caller.authenticated && caller.grants.allows(USER_CAPABILITIES_TOOLSET, 'write');
}

export class UserCapabilities {
  readonly #store: UserCapabilityStore;
  readonly #names: ToolNames;
  readonly #maxBytes: number;
  readonly #onStoreError: () => void;
  readonly #compiler: UserCompilePool;
  /** `id\nrevision` → rendered protocol. Safe across replicas: every write makes a new revision. */
  readonly #rendered = renderedCache();
  /** Renders in a worker now, by the same key: concurrent first loads of a revision share one. */
  readonly #rendering = new Map<string, Promise<RenderOutcome>>();

  constructor(options: UserCapabilitiesOptions) {
    this.#store = options.store;
    this.#names = options.names;
    this.#maxBytes = options.maxMarkdownBytes ?? DEFAULT_MAX_USER_MARKDOWN_BYTES;
    this.#onStoreError = options.onStoreError ?? (() => {});
    this.#compiler = new UserCompilePool({ ...options.compile, ...(options.log ? { log: options.log } : {}) });
  }

  /** The compile workers as /healthz shows them. */
  compileHealth(): CompilePoolHealth {
    return this.#compiler.health();
  }

  /** Stops the compile workers; saves after this fail. */
  close(): Promise<void> {
    return this.#compiler.close();
  }

  /**
   * The catalog this caller sees now: the platform listing, plus, for an owner allowed to read user
   * capabilities, those of theirs whose delivered dependencies are all visible to them now (one
   * indexed store query). Callers without the scope get the platform listing as it is.
   */
  async listing(caller: Caller, catalog: Catalog): Promise<CallerListing> {
    const platform = catalog.visibleCapabilities(caller.grants);
    if (!mayReadUserCapabilities(caller)) return { platform, user: [], catalogVersion: platform.catalogVersion };
    let records: UserCapabilitySummary[];
    try {
      records = await this.#store.listSummariesByOwner(caller.owner);
    } catch (error) {
      this.#failed(error);
      return { platform, user: [], catalogVersion: platform.catalogVersion, unavailable: STORE_UNAVAILABLE_MESSAGE };
    }
    const visible = records.filter((record) => dependenciesVisible(catalog, caller.grants, record.dependencies));
    if (visible.length === 0) return { platform, user: [], catalogVersion: platform.catalogVersion };
    const user = visible.map((record) => this.#entry(record));
    // An entry is a function of its record's revision (every write makes a new one) and of the
    // protocol tool's name, so those stand for the entries in the digest, cheaply.
    const revisions = visible.map((record) => [record.id, record.revision]);
    return { platform, user, catalogVersion: digestOf({ platform: platform.catalogVersion, protocolTool: this.#names.getCapabilityProtocol, revisions }) };
  }

  /**
   * The caller's own user capability `id` if it is visible to them now. Another owner's id, a
   * missing one and a hidden one all come back `not-accessible`, on one path. A first load waits
   * for a render (behind saves, up to their budgets): it is authorized again with `callerNow`, the
   * caller as the credentials say then, before it is handed out.
   */
  async load(caller: Caller, catalog: Catalog, id: string, callerNow: () => Caller | Promise<Caller>): Promise<LoadOutcome> {
    if (!mayReadUserCapabilities(caller) || !isUserCapabilityId(id)) return { kind: 'not-accessible' };
    let record: UserCapabilityRecord | undefined;
    try {
      record = await this.#store.get(id);
    } catch (error) {
      this.#failed(error);
      return { kind: 'failed', code: 'store-unavailable', message: STORE_UNAVAILABLE_MESSAGE };
    }
    if (!ownsVisibly(caller, catalog, record)) return { kind: 'not-accessible' };
    const cached = this.#rendered.has(renderedKey(record));
    const rendered = await this.#protocol(record);
    if (rendered.kind === 'busy') return { kind: 'failed', code: 'busy', message: LOAD_BUSY_MESSAGE };
    if (rendered.kind === 'unavailable') return { kind: 'failed', code: 'unavailable', message: COMPILE_UNAVAILABLE_MESSAGE };
    if (rendered.kind === 'over-budget') {
      const message = `this user capability could not be prepared within the server's budget (${this.#compiler.budgetMs} ms); save it again shorter or simpler`;
      return { kind: 'failed', code: 'limit-exceeded', message };
    }
    if (!cached && !ownsVisibly(await callerNow(), catalog, record)) return { kind: 'not-accessible' };
    return {
      kind: 'found',
      capability: {
        id: record.id,
        revision: record.revision,
        updatedAt: record.updatedAt,
        protocol: rendered.protocol,
        dependencies: record.dependencies,
        toolBindings: record.toolBindings,
      },
    };
  }

  /**
   * Creates a user capability, or updates the caller's own `capabilityId` (only if still at
   * `expectedRevision`, when given). The Markdown is compiled against the capabilities the caller
   * can see now; on any error nothing is stored. `callerNow` is the caller as the credentials say at
   * the moment it is called: the write is authorized again with it right before it is committed.
   * Nor is anything stored once `signal` is aborted (the request cancelled, its connection closed):
   * the save could no longer be answered, and a client told nothing retries it.
   */
  async save(
    caller: Caller,
    catalog: Catalog,
    input: { markdown: string; capabilityId?: string | undefined; expectedRevision?: string | undefined },
    callerNow: () => Caller | Promise<Caller>,
    signal?: AbortSignal,
  ): Promise<SaveOutcome> {
    if (!mayWriteUserCapabilities(caller)) return { kind: 'failed', code: 'forbidden', message: FORBIDDEN_MESSAGE };
    const { capabilityId, expectedRevision } = input;
    if (expectedRevision !== undefined && capabilityId === undefined) {
      return { kind: 'failed', code: 'invalid-arguments', message: 'expectedRevision applies to an update: pass the capabilityId it belongs to' };
    }
    try {
      // Ownership first: another owner's id gets the uniform error whatever the Markdown says.
      if (capabilityId !== undefined) {
        const existing = isUserCapabilityId(capabilityId) ? await this.#store.get(capabilityId) : undefined;
        if (existing === undefined || existing.ownerId !== caller.owner) return { kind: 'not-accessible' };
        // Stale already: no compile, and a revision this server never gave out (a NUL, say) never
        // reaches the store. The conditional write below still decides a race.
        if (expectedRevision !== undefined && expectedRevision !== existing.revision) throw new StaleRevisionError(capabilityId, expectedRevision);
      }
      // An owner at the limit is refused before the compile it could not use (the store's own check
      // at create still decides a race between two saves).
      if (capabilityId === undefined && (await this.#store.countByOwner(caller.owner)) >= this.#store.maxPerOwner) {
        throw new LimitExceededError(this.#store.maxPerOwner);
      }
      // Off the event loop, within a time budget: one author's save never stalls other callers.
      const outcome = await this.#compiler.compile({
        owner: caller.owner,
        markdown: input.markdown,
        maxBytes: this.#maxBytes,
        protocolTool: this.#names.getCapabilityProtocol,
        manifest: catalog.manifest,
        visible: visibleIds(catalog, caller.grants),
      });
      if (outcome.kind === 'busy') return { kind: 'failed', code: 'busy', message: BUSY_MESSAGE };
      if (outcome.kind === 'unavailable') return { kind: 'failed', code: 'unavailable', message: COMPILE_UNAVAILABLE_MESSAGE };
      const compiled = outcome.result;
      if (!compiled.ok) return { kind: 'invalid', ...toolDiagnostics(compiled.diagnostics) };
      const { name, description, whenToUse, uses, dependencies, toolBindings } = compiled.capability;
      const data: UserCapabilityData = { markdown: input.markdown, name, description, whenToUse, uses, dependencies, toolBindings };
      // The compile may have taken seconds: a key revoked or a scope narrowed meanwhile stops the
      // write, with the answer a caller without access gets.
      const now = await callerNow();
      if (!mayWriteUserCapabilities(now) || now.owner !== caller.owner) return { kind: 'not-accessible' };
      if (signal?.aborted === true) return { kind: 'failed', code: 'cancelled', message: CANCELLED_MESSAGE };
      const record =
        capabilityId === undefined
          ? await this.#store.create(caller.owner, data)
          : await this.#store.update(caller.owner, capabilityId, data, expectedRevision);
      // Rendered in the worker: the first load of this revision here does not parse it on the event
      // loop (64 KiB of blank lines take seconds to parse).
      this.#rendered.set(renderedKey(record), compiled.capability.protocol);
      const { diagnostics: warnings, omitted } = toolDiagnostics(compiled.diagnostics);
      return { kind: 'saved', capabilityId: record.id, revision: record.revision, warnings, omitted };
    } catch (error) {
      return this.#writeFailure(error);
    }
  }

  /** Deletes the caller's own user capability (visible or hidden); anything else is not-accessible. */
  async delete(caller: Caller, capabilityId: string): Promise<DeleteOutcome> {
    if (!mayWriteUserCapabilities(caller)) return { kind: 'failed', code: 'forbidden', message: FORBIDDEN_MESSAGE };
    if (!isUserCapabilityId(capabilityId)) return { kind: 'not-accessible' };
    try {
      const deleted = await this.#store.delete(caller.owner, capabilityId);
      return deleted ? { kind: 'deleted' } : { kind: 'not-accessible' };
    } catch (error) {
      return this.#writeFailure(error);
    }
  }

  #writeFailure(error: unknown): Exclude<SaveOutcome, { kind: 'saved' } | { kind: 'invalid' }> {
    if (isUserStoreError(error, 'not-found')) return { kind: 'not-accessible' };
    // Their messages name only the caller's own id, the revision they sent and the limit.
    if (isUserStoreError(error, 'stale-revision')) return { kind: 'failed', code: 'stale-revision', message: error.message };
    if (isUserStoreError(error, 'limit-exceeded')) return { kind: 'failed', code: 'limit-exceeded', message: error.message };
    if (isUserStoreError(error, 'store-unavailable')) {
      this.#failed(error);
      return { kind: 'failed', code: 'store-unavailable', message: STORE_UNAVAILABLE_MESSAGE };
    }
    throw error;
  }

  #entry(record: UserCapabilitySummary): UserCatalogEntry {
    return { ...catalogEntry({ ...record, protocolVersion: record.revision }, this.#names.getCapabilityProtocol), isUserDefined: true };
  }

  /**
   * The revision's protocol as served: as the worker rendered it at save, or, for a revision this
   * server did not save (a replica, a restart), rendered now in a worker, never on the event loop.
   */
  async #protocol(record: UserCapabilityRecord): Promise<RenderOutcome> {
    const key = renderedKey(record);
    const protocol = this.#rendered.get(key);
    if (protocol !== undefined) return { kind: 'rendered', protocol };
    let rendering = this.#rendering.get(key);
    if (rendering === undefined) {
      rendering = this.#compiler.render(record.ownerId, record.markdown, this.#names.getCapabilityProtocol);
      this.#rendering.set(key, rendering);
      void rendering
        .then((outcome) => {
          if (outcome.kind === 'rendered') this.#rendered.set(key, outcome.protocol);
        })
        .catch(() => undefined)
        .finally(() => this.#rendering.delete(key));
    }
    return rendering;
  }

  /** Counted; callers get the plain message. The store itself logs the detail (host, database), once per outage. */
  #failed(error: unknown): void {
    if (!isUserStoreError(error, 'store-unavailable')) throw error;
    this.#onStoreError();
  }
}

/** The key of a revision's rendered protocol: safe across replicas, every write makes a new revision. */
function renderedKey(record: { id: string; revision: string }): string {
  return `${record.id}\n${record.revision}`;
}

/** Whether `record` is this caller's, who may read user capabilities, and visible to them. */
function ownsVisibly(caller: Caller, catalog: Catalog, record: UserCapabilityRecord | undefined): record is UserCapabilityRecord {
  return (
    record !== undefined &&
    mayReadUserCapabilities(caller) &&
    record.ownerId === caller.owner &&
    dependenciesVisible(catalog, caller.grants, record.dependencies)
  );
}

/** Visible iff every delivered dependency is a capability these grants may use in this catalog now. */
function dependenciesVisible(catalog: Catalog, grants: Grants, dependencies: readonly string[]): boolean {
  for (const id of dependencies) {
    if (catalog.accessibleCapability(grants, id) === undefined) return false;
  }
  return true;
}

/** The ids of the capabilities the author may use now: a save is compiled against those alone. */
function visibleIds(catalog: Catalog, grants: Grants): string[] {
  return catalog.manifest.capabilities
    .filter((capability) => catalog.accessibleCapability(grants, capability.id) !== undefined)
    .map((capability) => capability.id);
}

/**
 * The diagnostics a save answers with, bounded: a 64 KiB document of broken links gave 5,300 of them,
 * a megabyte of JSON (twice in the answer) for an agent to read. Errors come first, so a cut never
 * hides why nothing was saved; each message is cut at MAX_DIAGNOSTIC_MESSAGE characters (a message
 * may quote what the author wrote).
 */
export const MAX_TOOL_DIAGNOSTICS = 100;
export const MAX_DIAGNOSTIC_MESSAGE = 1_000;

function toolDiagnostics(diagnostics: readonly Diagnostic[]): { diagnostics: ToolDiagnostic[]; omitted: number } {
  const ordered = [...diagnostics.filter((d) => d.severity === 'error'), ...diagnostics.filter((d) => d.severity !== 'error')];
  const kept = ordered.slice(0, MAX_TOOL_DIAGNOSTICS).sort((a, b) => a.line - b.line || a.column - b.column);
  return { diagnostics: kept.map(toToolDiagnostic), omitted: ordered.length - kept.length };
}

function toToolDiagnostic(diagnostic: Diagnostic): ToolDiagnostic {
  const points = [...diagnostic.message];
  const message = points.length > MAX_DIAGNOSTIC_MESSAGE ? `${points.slice(0, MAX_DIAGNOSTIC_MESSAGE - 1).join('')}…` : diagnostic.message;
  return { ruleId: diagnostic.ruleId, severity: diagnostic.severity, message, line: diagnostic.line, column: diagnostic.column };
}
