// Compiles user capabilities off the event loop (SPEC §8): a small pool of worker threads
// (server/user-compile-worker.ts) with a bounded queue and a hard time budget per save. A compile
// that overruns its budget, or a worker that dies (e.g. out of memory), terminates that worker and
// comes back as a diagnostic on the save; a full queue answers `busy`, and so does an owner who
// already has `perOwner` saves queued or compiling, so that one author cannot fill the queue and
// lock the others out. Meanwhile the server keeps answering every other call. No MCP SDK code here.
//
// Each worker is sent the catalog stand-ins (the manifest's capabilities without their protocols,
// the toolsets and the rule settings) once per manifest; a save then sends only the Markdown and the
// ids the author can see.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Manifest, ManifestCapability } from '../compiler/types.js';
import { budgetDiagnostic, compileUserCapability, visibleCatalog, type UserCompileResult } from '../compiler/user/compile-user.js';

export const DEFAULT_COMPILE_WORKERS = 1;
export const DEFAULT_COMPILE_QUEUE = 8;
export const DEFAULT_COMPILE_PER_OWNER = 2;
export const DEFAULT_COMPILE_BUDGET_MS = 5_000;
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
  /**
   * Test hook: a module whose `rules` export the worker checks after the user rules (e.g. a rule
   * made deliberately slow, to test the budget). Never set by `capreg serve`.
   */
  testRulesModule?: URL;
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

export type PoolOutcome = { kind: 'compiled'; result: UserCompileResult } | { kind: 'busy' };

/** A capability as a worker needs it: everything but the protocol, which the rules never read. */
export type StandIn = Omit<ManifestCapability, 'protocol'>;

/** Messages between the pool and a worker. */
export type ToWorker =
  | { type: 'catalog'; key: string; capabilities: StandIn[]; toolsets: Manifest['toolsets']; settings: Manifest['rules'] }
  | { type: 'compile'; job: number; key: string; visible: readonly string[]; markdown: string; maxBytes: number; protocolTool: string };
export type FromWorker = { type: 'ready' } | { type: 'compiled'; job: number; result: UserCompileResult } | { type: 'failed'; job: number; message: string };

interface Job {
  request: CompileRequest;
  resolve(outcome: PoolOutcome): void;
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
  readonly #workerUrl: URL;
  readonly #testRulesModule: URL | undefined;
  /** Running from TypeScript sources (tests) there is no compiled worker: compile inline. */
  readonly #inline: boolean;
  readonly #slots: Slot[] = [];
  readonly #queue: Job[] = [];
  #nextJob = 0;
  #closed = false;

  constructor(options: UserCompilePoolOptions = {}) {
    this.#size = Math.max(1, options.workers ?? DEFAULT_COMPILE_WORKERS);
    this.#queueLimit = Math.max(0, options.queue ?? DEFAULT_COMPILE_QUEUE);
    this.#perOwner = Math.max(1, options.perOwner ?? DEFAULT_COMPILE_PER_OWNER);
    this.#budgetMs = options.budgetMs ?? DEFAULT_COMPILE_BUDGET_MS;
    this.#workerUrl = options.workerUrl ?? new URL('./user-compile-worker.js', import.meta.url);
    this.#testRulesModule = options.testRulesModule;
    this.#inline = !existsSync(fileURLToPath(this.#workerUrl));
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
    const { owner } = request;
    const held = this.#owners.get(owner) ?? 0;
    if (held >= this.#perOwner) return Promise.resolve({ kind: 'busy' });
    const slot = this.#idleSlot();
    if (slot === undefined && this.#queue.length >= this.#queueLimit) return Promise.resolve({ kind: 'busy' });
    this.#owners.set(owner, held + 1);
    const outcome = new Promise<PoolOutcome>((resolve, reject) => {
      const job: Job = { request, resolve, reject };
      if (slot !== undefined) void this.#run(slot, job);
      else this.#queue.push(job);
    });
    // However the job ends (compiled, timed out, worker lost, pool closed), the owner's turn is given back.
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
        return ready();
      }
      const job = slot.job;
      if (job === undefined || job.id !== message.job) return;
      this.#finish(slot);
      if (message.type === 'compiled') job.resolve({ kind: 'compiled', result: message.result });
      else job.reject(new Error(`user capability compile failed: ${message.message}`));
    });
    const died = (error: Error): void => {
      if (slot.dead) return;
      slot.dead = true;
      failed(error);
      this.#remove(slot);
      const job = slot.job;
      slot.job = undefined;
      if (job !== undefined) {
        clearTimeout(job.timer);
        // A worker that cannot start is the server's fault; one that dies compiling (out of
        // memory) could not process this Markdown within its bounds.
        if (!slot.isReady) job.reject(new Error(`the user compile worker could not start: ${error.message}`));
        else job.resolve({ kind: 'compiled', result: { ok: false, diagnostics: [budgetDiagnostic(this.#budgetMs)] } });
      }
      this.#drain();
    };
    worker.on('error', died);
    worker.on('exit', (code) => died(new Error(`user compile worker exited with code ${code}`)));
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
    const { manifest, visible, markdown, maxBytes, protocolTool } = job.request;
    const key = manifest.integrity;
    if (slot.catalogKey !== key) {
      const catalog: ToWorker = { type: 'catalog', key, capabilities: standInsOf(manifest), toolsets: manifest.toolsets, settings: manifest.rules };
      slot.worker.postMessage(catalog);
      slot.catalogKey = key;
    }
    slot.worker.postMessage({ type: 'compile', job: id, key, visible, markdown, maxBytes, protocolTool } satisfies ToWorker);
    slot.job.timer = setTimeout(() => {
      if (slot.job?.id !== id) return;
      this.#finish(slot);
      slot.dead = true;
      this.#remove(slot);
      void slot.worker.terminate();
      job.resolve({ kind: 'compiled', result: { ok: false, diagnostics: [budgetDiagnostic(this.#budgetMs)] } });
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
