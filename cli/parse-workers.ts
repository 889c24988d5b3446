// Spread parsing over the machine's cores, under a time budget per document.
//
// A synchronous parse cannot be interrupted in the thread that runs it, and an input that is
// pathological for the Markdown parser can take minutes. So every document is parsed in a worker
// thread, never in the main thread: the main thread only hands out work and keeps the clock. A
// document still parsing `maxParseMs` after its worker started it gets no document (the caller
// reports it; see compile-root.ts); its worker is terminated and replaced, and the documents that
// were queued behind it go back to the shared queue. With N cores there are up to N workers (the
// main thread is idle while they parse); batches shrink towards the end of the queue so that the
// workers finish together.
//
// A worker takes ~100 ms to load its modules (unified, micromark, yaml; not the tokenizer: the
// main thread counts every body's tokens once the parse is over, and it loads the tokenizer's BPE
// tables for the rules anyway; only for a large registry does one worker load it too, to count
// half the bodies beside the main thread: see countBodies): a command calls
// startParseWorker() before it imports the compiler, so that both load at once. This module
// imports no compiler code for that reason.
//
// For the parse cache, documents can also be returned serialized (v8.serialize, lossless like the
// structured clone that carries them between threads): a worker then serializes its own documents
// (without the token count), in parallel, and sends the bytes instead of the objects.
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { deserialize, serialize } from 'node:v8';
import { Worker } from 'node:worker_threads';
import type { UncountedDocument } from '../compiler/parse-markdown.js';
import type { CapabilityDocument } from '../compiler/types.js';

/** Up to this many files, one worker; every further INLINE_LIMIT files may use one more core. */
export const INLINE_LIMIT = 64;

/**
 * The heap a parse worker may grow to. A protocol of real prose at the 1 MiB default size limit
 * parses in well under 512 MiB; a pathological one (a table of thousands of columns) grew a worker
 * past 1 GB within the time budget, and past 4 GB under the largest budget. One that needs more is
 * stopped and refused like one over the time budget.
 */
export const PARSE_WORKER_HEAP_MB = 1024;

/**
 * A parse worker's young generation. Nearly everything the parser allocates dies within one
 * document, so a smaller nursery costs a few more scavenges, each as short as before; left to V8
 * it grew to about twice this in each worker, ~45 MiB of a 1,000-capability build's peak of ~330
 * (docs/benchmarks.md, "Memory at 1,000").
 */
export const PARSE_WORKER_YOUNG_MB = 24;

/** How every parse worker is started. */
function newWorker(warmUpRounds: number): Worker {
  return new Worker(WORKER_URL, {
    workerData: { warmUpRounds } satisfies WorkerStart,
    resourceLimits: { maxOldGenerationSizeMb: PARSE_WORKER_HEAP_MB, maxYoungGenerationSizeMb: PARSE_WORKER_YOUNG_MB },
  });
}

export interface ParseInput {
  path: string;
  content: string;
}

/**
 * Bodies of at least this many characters in all (~4,000 protocols of 4 KB) are counted on two
 * threads, half in a parse worker kept for it: counting is ~80 ns a character on this code's test
 * machines (3.3 s for the 42 M characters of 10,000 generated protocols), and the worker's copy of
 * the tokenizer (~60 MiB) is not worth it for a smaller registry.
 */
export const COUNT_IN_TWO_MIN_CHARS = 16 * 1024 * 1024;

/** Messages between the main thread and a parse worker (cli/parse-worker.ts). */
export type ToWorker = { type: 'parse'; indices: number[]; files: ParseInput[]; serialize: boolean } | { type: 'count'; bodies: string[] };
/** One message per document, as soon as it is parsed: the main thread times each document. */
export type FromWorker =
  | { type: 'ready' }
  | { type: 'parsed'; index: number; document: UncountedDocument }
  /** The (uncounted) document's v8.serialize bytes, transferred. */
  | { type: 'serialized'; index: number; bytes: ArrayBuffer }
  | { type: 'failed'; index: number; message: string; stack?: string }
  /** The BPE token counts of the bodies of a `count` message, in its order. */
  | { type: 'counted'; counts: number[] };

const WORKER_URL = new URL('./parse-worker.js', import.meta.url);

/** A worker started ahead of the parse (or kept from the last one), whether it has said it is ready, and its listeners until then. */
let spare: { worker: Worker; ready: boolean; detach: () => void } | undefined;

/** How many parses have handed files to workers in this process (see {@link parsesStarted}). */
let started = 0;

/**
 * How many parses have handed files to workers so far: a command that runs two parses side by side
 * (`capreg check`: the new tree, the base's changed files) asks it to know whether a spare worker
 * started now could still be used by the other one.
 */
export function parsesStarted(): number {
  return started;
}

/** What a parse worker is started with (its `workerData`). */
export interface WorkerStart {
  /**
   * Rounds of parsing a protocol of the worker's own before it says it is ready: a new isolate runs
   * the parser's code unoptimized, ~50 ms for a protocol that takes ~6 ms once the code is hot.
   */
  warmUpRounds: number;
}

export const MAX_WARM_UP_ROUNDS = 100;

/**
 * Start one parse worker now, for the next parse to use. It does not keep the process alive: a
 * command that ends up parsing nothing (a build answered from the build cache) exits as usual.
 * With `warmUpRounds`, it warms its parser up before it says it is ready (see WorkerStart).
 */
export function startParseWorker(warmUpRounds = 0): void {
  if (spare || !existsSync(fileURLToPath(WORKER_URL))) return;
  keepAsSpare(newWorker(warmUpRounds), false);
}

/** Make `worker` the spare; `ready` when it has said so already. */
function keepAsSpare(worker: Worker, ready: boolean): void {
  worker.unref();
  const onReady = (): void => {
    kept.ready = true;
  };
  // A spare that fails (or ends) is dropped; the parse starts its own workers.
  const onGone = (): void => {
    if (spare === kept) spare = undefined;
  };
  // Only these: removeAllListeners() would also drop the Worker's own bookkeeping of its port.
  const detach = (): void => {
    worker.off('message', onReady);
    worker.off('error', onGone);
    worker.off('exit', onGone);
  };
  const kept = { worker, ready, detach };
  if (!ready) worker.once('message', onReady);
  worker.once('error', onGone);
  worker.once('exit', onGone);
  spare = kept;
}

/** One document serialized into a transferable buffer of its own. */
export function serializeDocument(document: UncountedDocument): ArrayBuffer {
  const bytes = serialize(document);
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
}

/** How many parse workers to start for `fileCount` files, with `cores` threads at most (`--jobs`, by default the cores available). */
export function threadCount(fileCount: number, cores = availableParallelism()): number {
  return Math.max(1, Math.min(cores, Math.ceil(fileCount / INLINE_LIMIT)));
}

/**
 * What lint reports for a protocol the parse refused (registry-files, 1:1): it needed over
 * PARSE_WORKER_HEAP_MB of heap if the parse put it in `overMemory` (ParseOptions), else it ran
 * over `maxParseMs`.
 */
export function overBudgetProblem(file: string, maxParseMs: number, overMemory: ReadonlySet<string>): string {
  const budget = maxParseMs % 1000 === 0 ? `${maxParseMs / 1000} s` : `${maxParseMs} ms`;
  const over = overMemory.has(file)
    ? `needed over ${PARSE_WORKER_HEAP_MB / 1024} GiB of memory (a parse worker's heap, which no configuration raises)`
    : `took over ${budget} (limits.maxParseMs in capreg.config.yaml)`;
  return `parsing this file ${over}, so it was stopped and not checked; simplify the Markdown (long runs of brackets or table rows, deep nesting) or split the file`;
}

export interface ParseOptions {
  /** Wall-clock time one document may take to parse (ResolvedConfig.maxParseMs). */
  maxParseMs: number;
  /** Workers to start; by default threadCount(files). */
  threads?: number | undefined;
  /**
   * Keep one worker, its code hot, as the spare for the next parse instead of ending them all
   * (`--watch`: every edit is a parse of one file). A function is asked when the parse is over
   * (`capreg check`: only while another parse may still take the worker).
   */
  keepWorker?: boolean | (() => boolean) | undefined;
  /**
   * Filled with the path of each file refused for needing more than PARSE_WORKER_HEAP_MB (a file
   * refused and not in it ran over `maxParseMs`).
   */
  overMemory?: Set<string> | undefined;
  /** Bodies of this many characters in all, or more, are counted on two threads (COUNT_IN_TWO_MIN_CHARS). */
  countInTwoMinChars?: number;
  /** Filled with the path of each file whose body a worker counted (see countBodies). */
  countedInWorker?: Set<string> | undefined;
}

/** Per input file, its document; undefined for a file whose parse ran over the budget (time or memory). */
export type ParsedDocuments = (CapabilityDocument | undefined)[];

export async function parseInWorkers(files: readonly ParseInput[], options: ParseOptions): Promise<ParsedDocuments> {
  return parseFiles(files, options);
}

/**
 * Told of each document as it comes in, with its v8.serialize bytes (for the parse cache, which
 * writes them out at once instead of keeping them all until the end). They are the document
 * without `bodyTokens`: bodies are counted once the parse is over (see {@link parseFiles}).
 */
export type OnSerialized = (index: number, bytes: Uint8Array) => void;

/** Parse, and hand every document's serialized form to `onSerialized` as it comes in. */
export async function parseAndSerialize(files: readonly ParseInput[], options: ParseOptions, onSerialized: OnSerialized): Promise<ParsedDocuments> {
  return parseFiles(files, { ...options, onSerialized });
}

interface PoolWorker {
  worker: Worker;
  /** Its listeners, taken off when it is kept as the spare. */
  listeners: { message: (message: FromWorker) => void; error: (error: Error) => void; exit: (code: number) => void };
  /** Indices sent to this worker and not answered yet, in the order it parses them. */
  queue: number[];
  /** The last index of each batch in flight (a worker gets two, so that it never waits for the main thread). */
  batchEnds: number[];
  /** Fires when the document at the head of `queue` has run over its budget. */
  timer?: NodeJS.Timeout;
  /** It has said it is ready (or was a spare that had); a spare still warming up has not. */
  ready: boolean;
  exited: boolean;
}

/**
 * Each body's tokens are counted once every document is in and the other workers are gone: the
 * tokenizer's tables (~50 MiB resident) are then loaded by the first count, never beside two parse
 * isolates, and counting does not take a core from the parse (a cold build of 1,000: peak RSS
 * ~30 MiB lower, no slower; docs/benchmarks.md, "The tokenizer after the parse").
 */
async function parseFiles(files: readonly ParseInput[], options: ParseOptions & { onSerialized?: OnSerialized }): Promise<ParsedDocuments> {
  const documents = new Array<UncountedDocument | undefined>(files.length);
  let characters = 0;
  for (const file of files) characters += file.content.length;
  const inTwo = characters >= (options.countInTwoMinChars ?? COUNT_IN_TWO_MIN_CHARS);
  const helper = await parseUncountedFiles(files, { ...options, holdWorker: inTwo }, documents);
  return countBodies(documents, { helper, keepWorker: wantsWorkerKept(options), countedInWorker: options.countedInWorker });
}

/** Whether the parse is to keep a worker as the spare (ParseOptions.keepWorker), asked when it is over. */
function wantsWorkerKept(options: ParseOptions): boolean {
  return typeof options.keepWorker === 'function' ? options.keepWorker() : options.keepWorker === true;
}

/** A worker the parse held back (holdWorker): idle, its listeners gone, keeping the process alive until it is ended. */
interface HeldWorker {
  worker: Worker;
  /** It has said it is ready (a spare still warming up has not). */
  ready: boolean;
}

/**
 * The documents with their bodies' token counts; holes stay holes. With a `helper` (the worker a
 * large parse held back), it counts the first half of the bodies while this thread counts the rest
 * (both load the tokenizer at once); if it fails, this thread counts its half too. The helper then
 * becomes the spare if `keepWorker` (and it counted, and there is no spare yet), else it ends,
 * whatever happened here: a worker left running would keep the process from exiting.
 */
async function countBodies(
  documents: readonly (UncountedDocument | undefined)[],
  { helper, keepWorker, countedInWorker }: { helper: HeldWorker | undefined; keepWorker: boolean; countedInWorker: Set<string> | undefined },
): Promise<ParsedDocuments> {
  let keep = false;
  try {
    const { countBodyTokens, withBodyTokens } = await import('../compiler/parse.js');
    const counted: ParsedDocuments = new Array<CapabilityDocument | undefined>(documents.length);
    const present: number[] = [];
    documents.forEach((document, index) => {
      if (document) present.push(index);
    });
    const theirs = helper ? present.slice(0, Math.floor(present.length / 2)) : [];
    const bodies = theirs.map((index) => documents[index]!.body);
    const answer = helper && theirs.length > 0 ? countOn(helper.worker, bodies) : Promise.resolve(undefined);
    for (const index of present.slice(theirs.length)) counted[index] = countBodyTokens(documents[index]!);
    const counts = await answer;
    theirs.forEach((index, place) => {
      const document = documents[index]!;
      if (counts) countedInWorker?.add(document.file);
      counted[index] = counts ? withBodyTokens(document, counts[place]!) : countBodyTokens(document);
    });
    // A worker that failed to count is not trusted with the next parse.
    keep = keepWorker && (counts !== undefined || theirs.length === 0);
    return counted;
  } finally {
    if (helper && keep && spare === undefined) keepAsSpare(helper.worker, helper.ready);
    else if (helper) await helper.worker.terminate();
  }
}

/** The token counts of `bodies`, counted by `worker`; undefined if it fails or ends first. */
function countOn(worker: Worker, bodies: string[]): Promise<number[] | undefined> {
  return new Promise((resolve) => {
    const settle = (counts: number[] | undefined): void => {
      worker.off('message', onMessage);
      worker.off('error', onGone);
      worker.off('exit', onGone);
      resolve(counts);
    };
    const onMessage = (message: FromWorker): void => {
      if (message.type === 'counted') settle(isCounts(message.counts, bodies.length) ? message.counts : undefined);
      else if (message.type === 'failed') settle(undefined);
    };
    const onGone = (): void => settle(undefined);
    worker.on('message', onMessage);
    worker.on('error', onGone);
    worker.on('exit', onGone);
    worker.postMessage({ type: 'count', bodies } satisfies ToWorker);
  });
}

function isCounts(counts: unknown, length: number): counts is number[] {
  return Array.isArray(counts) && counts.length === length && counts.every((count) => Number.isSafeInteger(count) && count >= 0);
}

/**
 * Fills `documents`; one over the budget (time or memory) stays a hole. With `holdWorker`, an idle
 * worker is held back and returned (see HeldWorker), for the caller to end or keep.
 */
async function parseUncountedFiles(
  files: readonly ParseInput[],
  options: ParseOptions & { onSerialized?: OnSerialized; holdWorker?: boolean },
  documents: (UncountedDocument | undefined)[],
): Promise<HeldWorker | undefined> {
  if (files.length === 0) return undefined;
  const { onSerialized } = options;

  // Running from TypeScript sources (in-process tests) there is no compiled worker: parse inline,
  // without a budget. The built CLI (lib/) always has its worker.
  if (!existsSync(fileURLToPath(WORKER_URL))) {
    const { parseUncounted } = await import('../compiler/parse-markdown.js');
    files.forEach((file, index) => {
      const document = parseUncounted(file.path, file.content);
      documents[index] = document;
      onSerialized?.(index, serialize(document));
    });
    return undefined;
  }

  started += 1;
  const threads = options.threads ?? threadCount(files.length);
  /** Documents taken back from a terminated worker; handed out before the rest. */
  const requeued: number[] = [];
  let next = 0;
  let remaining = files.length;
  const hasWork = (): boolean => requeued.length > 0 || next < files.length;
  /** The next batch of indices, or undefined when there is nothing left to hand out. */
  const take = (): number[] | undefined => {
    if (requeued.length > 0) return requeued.splice(0, 32);
    if (next >= files.length) return undefined;
    const size = Math.max(4, Math.min(32, Math.ceil((files.length - next) / (threads * 4))));
    const start = next;
    next = Math.min(files.length, next + size);
    return Array.from({ length: next - start }, (_, offset) => start + offset);
  };

  const pool = new Set<PoolWorker>();
  /** The worker kept when the parse is over: the spare (keepWorker), or held for the caller (holdWorker). */
  let kept: PoolWorker | undefined;
  const stopped: Promise<number>[] = [];
  let failure: Error | undefined;
  let settle: (() => void) | undefined;
  const done = new Promise<void>((resolve) => (settle = resolve));
  const fail = (error: Error): void => {
    failure ??= error;
    settle?.();
  };
  const answered = (): void => {
    remaining -= 1;
    if (remaining === 0) settle?.();
  };

  /** Restart the clock for the document now at the head of the worker's queue. */
  const arm = (member: PoolWorker): void => {
    clearTimeout(member.timer);
    member.timer = member.queue.length > 0 ? setTimeout(() => overBudget(member), options.maxParseMs) : undefined;
  };

  const feed = (member: PoolWorker): void => {
    const idle = member.queue.length === 0;
    while (!failure && member.batchEnds.length < 2) {
      const indices = take();
      if (!indices) break;
      member.queue.push(...indices);
      member.batchEnds.push(indices[indices.length - 1]!);
      member.worker.postMessage({
        type: 'parse',
        indices,
        files: indices.map((index) => files[index]!),
        serialize: onSerialized !== undefined,
      } satisfies ToWorker);
    }
    if (idle) arm(member);
  };

  const retire = (member: PoolWorker): void => {
    clearTimeout(member.timer);
    // terminate() stops a worker even in the middle of a synchronous parse.
    stopped.push(member.worker.terminate());
    pool.delete(member);
  };

  const overBudget = (member: PoolWorker): void => {
    // A timer can fire late, after this thread was busy (loading the tokenizer, reading an evals
    // file), with the document's answer already waiting: timers run before the messages of the
    // same turn of the event loop, setImmediate callbacks after them. The document is over budget
    // only if it is still unanswered then.
    const head = member.queue[0];
    setImmediate(() => {
      if (pool.has(member) && member.queue[0] === head) stopOverBudget(member);
    });
  };

  const stopOverBudget = (member: PoolWorker): void => {
    retire(member);
    member.queue.shift(); // stays undefined: the caller reports it
    requeued.unshift(...member.queue);
    answered();
    if (hasWork() && !failure) start();
  };

  const start = (): void => {
    const early = spare;
    spare = undefined;
    const worker = early?.worker ?? newWorker(0);
    early?.detach();
    worker.ref();
    // A retired worker's last messages and its exit are no longer news.
    const onMessage = (message: FromWorker): void => {
      if (message.type === 'ready') {
        member.ready = true;
        if (pool.has(member)) feed(member);
        return;
      }
      // A parse worker is sent no bodies to count while it parses.
      if (!pool.has(member) || message.type === 'counted') return;
      if (message.type === 'failed') {
        // The same error an inline parse would have thrown.
        return fail(Object.assign(new Error(message.message), message.stack ? { stack: message.stack } : {}));
      }
      member.queue.shift();
      if (message.index === member.batchEnds[0]) member.batchEnds.shift();
      // The clock and the next batch first: taking the document in takes this thread a moment.
      arm(member);
      feed(member);
      if (message.type === 'serialized') {
        const bytes = new Uint8Array(message.bytes);
        documents[message.index] = deserialize(bytes) as UncountedDocument;
        onSerialized?.(message.index, bytes);
      } else {
        documents[message.index] = message.document;
      }
      answered();
    };
    const member: PoolWorker = {
      worker,
      listeners: {
        message: onMessage,
        error: (error) => {
          if (!pool.has(member)) return;
          // The document it was parsing needed more than PARSE_WORKER_HEAP_MB: refused as over budget.
          if ((error as NodeJS.ErrnoException).code === 'ERR_WORKER_OUT_OF_MEMORY' && member.queue.length > 0) {
            options.overMemory?.add(files[member.queue[0]!]!.path);
            stopOverBudget(member);
          } else fail(error);
        },
        exit: (code) => {
          member.exited = true;
          if (pool.has(member) && member.queue.length > 0) fail(new Error(`parse worker exited with code ${code}`));
        },
      },
      queue: [],
      batchEnds: [],
      ready: early?.ready ?? false,
      exited: false,
    };
    pool.add(member);
    worker.on('message', member.listeners.message);
    worker.on('error', member.listeners.error);
    worker.on('exit', member.listeners.exit);
    if (early?.ready) queueMicrotask(() => feed(member));
  };

  try {
    for (let i = 0; i < threads; i += 1) start();
    await done;
    if (failure) throw failure;
  } finally {
    const members = [...pool];
    // A live worker that answered everything it was sent (none is left over after a failure), one
    // that has said it is ready first: a spare may still be warming up when the others have parsed everything.
    const keeping = !failure && (options.holdWorker === true || (spare === undefined && wantsWorkerKept(options)));
    const idle = keeping ? members.filter((member) => member.queue.length === 0 && !member.exited) : [];
    kept = idle.find((member) => member.ready) ?? idle[0];
    for (const member of members) {
      if (member !== kept) retire(member);
    }
    if (kept) {
      clearTimeout(kept.timer);
      pool.delete(kept);
      kept.worker.off('message', kept.listeners.message);
      kept.worker.off('error', kept.listeners.error);
      kept.worker.off('exit', kept.listeners.exit);
      if (!options.holdWorker) keepAsSpare(kept.worker, kept.ready);
    }
    await Promise.all(stopped);
  }
  return options.holdWorker && kept ? { worker: kept.worker, ready: kept.ready } : undefined;
}
