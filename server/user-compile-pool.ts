// Compiles user capabilities off the event loop (SPEC §8): a small pool of worker threads
// (server/user-compile-worker.ts) with a bounded queue and a hard time budget per save. A compile
// that overruns its budget, or a worker that dies (e.g. out of memory), terminates that worker and
// comes back as a diagnostic on the save; a full queue answers `busy`, and so does an owner who
// already has `perOwner` saves queued or compiling, so that one author cannot fill the queue and
// lock the others out. Meanwhile the server keeps answering every other call. No MCP SDK code here.
//
// The same workers render a stored revision's protocol that this server did not compile (a replica,
// or after a restart): its parse takes as long as a save's, so it is never done on the event loop.
//
// Each worker is sent the catalog stand-ins (the manifest's capabilities without their protocols,
// the toolsets and the rule settings) once per manifest; a save then sends only the Markdown and the
// ids the author can see.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Manifest, ManifestCapability } from '../compiler/types.js';
import type { LineLog } from './log.js';
import { budgetDiagnostic, compileUserCapability, renderStoredProtocol, visibleCatalog, type UserCompileResult } from '../compiler/user/compile-user.js';

export const DEFAULT_COMPILE_WORKERS = 1;
export const DEFAULT_COMPILE_QUEUE = 8;
export const DEFAULT_COMPILE_PER_OWNER = 2;
export const DEFAULT_COMPILE_BUDGET_MS = 5_000;
/**
 * A worker not ready within this long is taken as one that cannot start (a module read hung on a
 * dead mount, say): without it the save waiting for it, and every save queued behind, would wait forever.
 */
export const DEFAULT_WORKER_START_TIMEOUT_MS = 30_000;
/** Heap of one worker; a save is at most 64 KiB, so only a runaway compile comes near it. */
const WORKER_HEAP_MB = 256;

export interface UserCompilePoolOptions {
  /** Worker threads (default 1). */
  workers?: number;
  /** Saves waiting for a worker; past it a save answers `busy` (default 8). */
  queue?: number;
  /** Saves of one owner queued or compiling; past it that owner's save answers `busy` (default 2). */
  perOwner?: number;
  /** Wall-clock budget of one compile in a ready worker, in ms (default 5,000). */
  budgetMs?: number;
  /** The compiled worker module; by default the one next to this file. */
  workerUrl?: URL;
  /** How long a new worker may take to be ready, in ms (default 30,000); past it, it is one that cannot start. */
  startTimeoutMs?: number;
  /**
   * Test hook: a module whose `rules` export the worker checks after the user rules (e.g. a rule
   * made deliberately slow, to test the budget). Never set by `capreg serve`.
   */
  testRulesModule?: URL;
  /** Told when workers stop starting (the detail, for the operator) and when one starts again. */
  log?: LineLog;
}

/** The manifest a save is compiled against, and the capability ids the author may use in it. */
export interface CompileRequest {
  /** Who saves: counted against `perOwner`. */
  owner: string;
  markdown: string;
  maxBytes: number;
  /** The name the server serves protocols under: the body's `capability:` links are rendered with it. */
  protocolTool: string;
  manifest: Manifest;
  visible: readonly string[];
}

/** `unavailable`: no worker could be started (the installation changed under the server, say). */
export type PoolOutcome = { kind: 'compiled'; result: UserCompileResult } | { kind: 'busy' } | { kind: 'unavailable' };

/** A stored revision rendered, or why not: the owner's share was full, the render overran the budget, or no worker starts. */
export type RenderOutcome = { kind: 'rendered'; protocol: string } | { kind: 'busy' } | { kind: 'over-budget' } | { kind: 'unavailable' };

/** What /healthz says of the workers: `unavailable` from a worker that could not start until one does. */
export type CompilePoolHealth = { status: 'ok' } | { status: 'unavailable'; reason: 'worker-not-starting' };

/** A capability as a worker needs it: everything but the protocol, which the rules never read. */
export type StandIn = Omit<ManifestCapability, 'protocol'>;

/** Messages between the pool and a worker. */
export type ToWorker =
  | { type: 'catalog'; key: string; capabilities: StandIn[]; toolsets: Manifest['toolsets']; settings: Manifest['rules'] }
  | { type: 'compile'; job: number; key: string; visible: readonly string[]; markdown: string; maxBytes: number; protocolTool: string }
  | { type: 'render'; job: number; markdown: string; protocolTool: string };
export type FromWorker =
  | { type: 'ready' }
  | { type: 'compiled'; job: number; result: UserCompileResult }
  | { type: 'rendered'; job: number; protocol: string }
  | { type: 'failed'; job: number; message: string };

/** A compile or a render, queued or in a worker. */
interface Job {
  /** Posts the job to the worker (with the catalog first, when the worker lacks it). */
  send(slot: Slot, id: number): void;
  /** The worker's answer. */
  answered(message: Extract<FromWorker, { type: 'compiled' | 'rendered' }>): void;
  /** The job overran its budget, or the worker died running it. */
  overran(): void;
  /** The worker it was given to could not start. */
  unavailable(): void;
  reject(error: Error): void;
}

interface Slot {
  worker: Worker;
  ready: Promise<void>;
  /** The manifest whose stand-ins this worker holds. */
  catalogKey: string | undefined;
  job: (Job & { id: number; timer?: NodeJS.Timeout }) | undefined;
  isReady: boolean;
  dead: boolean;
}

const standIns = new WeakMap<Manifest, StandIn[]>();

function standInsOf(manifest: Manifest): StandIn[] {
  let list = standIns.get(manifest);
  if (list === undefined) {
    list = manifest.capabilities.map(({ protocol: _protocol, ...rest }) => rest);
    standIns.set(manifest, list);
  }
  return list;
}

export class UserCompilePool {
  readonly #size: number;
  readonly #queueLimit: number;
  readonly #perOwner: number;
  /** Owner → saves of theirs queued or compiling. */
  readonly #owners = new Map<string, number>();
  readonly #budgetMs: number;
  readonly #startTimeoutMs: number;
  readonly #workerUrl: URL;
  readonly #testRulesModule: URL | undefined;
  /**
   * Running from TypeScript sources (tests) with the default worker there is no compiled worker:
   * compile inline. Never from the compiled server, nor with a worker module given: one missing
   * there is a worker that cannot start (unavailable), not a compile on the event loop with no budget.
   */
  readonly #inline: boolean;
  readonly #slots: Slot[] = [];
  readonly #queue: Job[] = [];
  #nextJob = 0;
  #closed = false;
  readonly #log: LineLog;
  /** Why the last worker could not start, until one does. */
  #startFailure: string | undefined;

  constructor(options: UserCompilePoolOptions = {}) {
    this.#size = Math.max(1, options.workers ?? DEFAULT_COMPILE_WORKERS);
    this.#queueLimit = Math.max(0, options.queue ?? DEFAULT_COMPILE_QUEUE);
    this.#perOwner = Math.max(1, options.perOwner ?? DEFAULT_COMPILE_PER_OWNER);
    this.#budgetMs = options.budgetMs ?? DEFAULT_COMPILE_BUDGET_MS;
    this.#startTimeoutMs = options.startTimeoutMs ?? DEFAULT_WORKER_START_TIMEOUT_MS;
    this.#workerUrl = options.workerUrl ?? new URL('./user-compile-worker.js', import.meta.url);
    this.#testRulesModule = options.testRulesModule;
    this.#inline = options.workerUrl === undefined && import.meta.url.endsWith('.ts') && !existsSync(fileURLToPath(this.#workerUrl));
    this.#log = options.log ?? (() => {});
  }

  health(): CompilePoolHealth {
    return this.#startFailure === undefined ? { status: 'ok' } : { status: 'unavailable', reason: 'worker-not-starting' };
  }

  get budgetMs(): number {
    return this.#budgetMs;
  }

  compile(request: CompileRequest): Promise<PoolOutcome> {
    if (this.#closed) return Promise.reject(new Error('the user compile pool is closed'));
    if (this.#inline) {
      const visible = new Set(request.visible);
      const catalog = visibleCatalog(request.manifest, (id) => visible.has(id));
      const result = compileUserCapability(request.markdown, catalog, {
        maxBytes: request.maxBytes,
        protocolTool: request.protocolTool,
        ...(request.manifest.rules ? { settings: request.manifest.rules } : {}),
      });
      return Promise.resolve({ kind: 'compiled', result });
    }
    const overBudget: PoolOutcome = { kind: 'compiled', result: { ok: false, diagnostics: [budgetDiagnostic(this.#budgetMs)] } };
    return this.#submit<PoolOutcome>(request.owner, this.#queueLimit, (resolve, reject) => ({
      send: (slot, id) => {
        const { manifest, visible, markdown, maxBytes, protocolTool } = request;
        const key = manifest.integrity;
        if (slot.catalogKey !== key) {
          const catalog: ToWorker = { type: 'catalog', key, capabilities: standInsOf(manifest), toolsets: manifest.toolsets, settings: manifest.rules };
          slot.worker.postMessage(catalog);
          slot.catalogKey = key;
        }
        slot.worker.postMessage({ type: 'compile', job: id, key, visible, markdown, maxBytes, protocolTool } satisfies ToWorker);
      },
      answered: (message) => (message.type === 'compiled' ? resolve({ kind: 'compiled', result: message.result }) : reject(new Error('unexpected answer'))),
      overran: () => resolve(overBudget),
      unavailable: () => resolve({ kind: 'unavailable' }),
      reject,
    }));
  }

  /**
   * The protocol of a stored revision as `get_capability_protocol` serves it, rendered in a worker
   * under the same per-owner share and budget as a save (`owner` is the capability's). A load is
   * not refused for a full queue: after a restart many owners load at once, and each render is
   * short. What bounds the renders waiting is the share and the transports' requests in flight.
   */
  render(owner: string, markdown: string, protocolTool: string): Promise<RenderOutcome> {
    if (this.#closed) return Promise.reject(new Error('the user compile pool is closed'));
    if (this.#inline) return Promise.resolve({ kind: 'rendered', protocol: renderStoredProtocol(markdown, protocolTool) });
    return this.#submit<RenderOutcome>(owner, Infinity, (resolve, reject) => ({
      send: (slot, id) => slot.worker.postMessage({ type: 'render', job: id, markdown, protocolTool } satisfies ToWorker),
      answered: (message) => (message.type === 'rendered' ? resolve({ kind: 'rendered', protocol: message.protocol }) : reject(new Error('unexpected answer'))),
      overran: () => resolve({ kind: 'over-budget' }),
      unavailable: () => resolve({ kind: 'unavailable' }),
      reject,
    }));
  }

  /** Queues a job, or answers `busy` when the owner's share is full, or the queue is at `queueLimit`. */
  #submit<T>(owner: string, queueLimit: number, job: (resolve: (outcome: T) => void, reject: (error: Error) => void) => Job): Promise<T | { kind: 'busy' }> {
    const held = this.#owners.get(owner) ?? 0;
    if (held >= this.#perOwner) return Promise.resolve({ kind: 'busy' });
    const slot = this.#idleSlot();
    if (slot === undefined && this.#queue.length >= queueLimit) return Promise.resolve({ kind: 'busy' });
    this.#owners.set(owner, held + 1);
    const outcome = new Promise<T>((resolve, reject) => {
      const queued = job(resolve, reject);
      if (slot !== undefined) void this.#run(slot, queued);
      else this.#queue.push(queued);
    });
    // However the job ends (answered, timed out, worker lost, pool closed), the owner's turn is given back.
    const release = (): void => {
      const left = (this.#owners.get(owner) ?? 1) - 1;
      if (left > 0) this.#owners.set(owner, left);
      else this.#owners.delete(owner);
    };
    outcome.then(release, release);
    return outcome;
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const job of this.#queue.splice(0)) job.reject(new Error('the user compile pool is closed'));
    await Promise.all(this.#slots.splice(0).map((slot) => this.#kill(slot)));
  }

  #idleSlot(): Slot | undefined {
    const idle = this.#slots.find((slot) => slot.job === undefined && !slot.dead);
    if (idle !== undefined) return idle;
    if (this.#slots.length >= this.#size) return undefined;
    const slot = this.#spawn();
    this.#slots.push(slot);
    return slot;
  }

  #spawn(): Slot {
    const worker = new Worker(this.#workerUrl, {
      workerData: { testRulesModule: this.#testRulesModule?.href },
      resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB },
    });
    // An idle worker must not keep a server that is shutting down alive.
    worker.unref();
    let ready!: () => void;
    let failed!: (error: Error) => void;
    const slot: Slot = {
      worker,
      ready: new Promise<void>((resolve, reject) => ((ready = resolve), (failed = reject))),
      catalogKey: undefined,
      job: undefined,
      isReady: false,
      dead: false,
    };
    slot.ready.catch(() => undefined);
    worker.on('message', (message: FromWorker) => {
      if (message.type === 'ready') {
        slot.isReady = true;
        if (this.#startFailure !== undefined) this.#log('capreg serve: the user compile worker starts again');
        this.#startFailure = undefined;
        return ready();
      }
      const job = slot.job;
      if (job === undefined || job.id !== message.job) return;
      this.#finish(slot);
      if (message.type === 'failed') job.reject(new Error(`user capability compile failed: ${message.message}`));
      else job.answered(message);
    });
    const died = (error: Error): void => {
      if (slot.dead) return;
      slot.dead = true;
      failed(error);
      // Said once until a worker starts: the detail (a path, a module) is for the operator, not callers.
      if (!slot.isReady && this.#startFailure === undefined) {
        this.#log(
          `capreg serve: the user compile worker could not start (${error.message}); user-capability saves and first loads answer "unavailable" until it does`,
          'warn',
        );
      }
      if (!slot.isReady) this.#startFailure = error.message;
      this.#remove(slot);
      const job = slot.job;
      slot.job = undefined;
      if (job !== undefined) {
        clearTimeout(job.timer);
        // A worker that cannot start is the server's fault; one that dies compiling (out of
        // memory) could not process this Markdown within its bounds.
        if (!slot.isReady) job.unavailable();
        else job.overran();
      }
      // The saves queued behind a worker that could not start would each start another and wait for
      // it in turn (a start timeout apiece): unless a worker is running, they answer unavailable now.
      if (!slot.isReady && !this.#slots.some((other) => other.isReady && !other.dead)) {
        for (const queued of this.#queue.splice(0)) queued.unavailable();
      }
      this.#drain();
    };
    worker.on('error', died);
    worker.on('exit', (code) => died(new Error(`user compile worker exited with code ${code}`)));
    const starting = setTimeout(() => {
      if (slot.isReady) return;
      died(new Error(`the worker was not ready within ${this.#startTimeoutMs} ms`));
      void worker.terminate();
    }, this.#startTimeoutMs);
    starting.unref();
    void slot.ready.then(
      () => clearTimeout(starting),
      () => clearTimeout(starting),
    );
    return slot;
  }

  async #run(slot: Slot, job: Job): Promise<void> {
    const id = (this.#nextJob += 1);
    // Reserve the slot before waiting for it to be ready.
    slot.job = { ...job, id };
    try {
      await slot.ready;
    } catch {
      return; // died() answered the job
    }
    if (slot.dead || slot.job?.id !== id) return;
    job.send(slot, id);
    slot.job.timer = setTimeout(() => {
      if (slot.job?.id !== id) return;
      this.#finish(slot);
      slot.dead = true;
      this.#remove(slot);
      void slot.worker.terminate();
      job.overran();
      this.#drain();
    }, this.#budgetMs);
  }

  /** The slot's job is answered: free the slot and start the next queued job on it. */
  #finish(slot: Slot): void {
    if (slot.job) clearTimeout(slot.job.timer);
    slot.job = undefined;
    if (!slot.dead) queueMicrotask(() => this.#drain());
  }

  #drain(): void {
    while (this.#queue.length > 0 && !this.#closed) {
      const slot = this.#idleSlot();
      if (slot === undefined) return;
      void this.#run(slot, this.#queue.shift()!);
    }
  }

  #remove(slot: Slot): void {
    const index = this.#slots.indexOf(slot);
    if (index >= 0) this.#slots.splice(index, 1);
  }

  async #kill(slot: Slot): Promise<void> {
    slot.dead = true;
    if (slot.job) clearTimeout(slot.job.timer);
    slot.job?.reject(new Error('the user compile pool is closed'));
    slot.job = undefined;
    await slot.worker.terminate();
  }
}
