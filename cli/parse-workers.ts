// Spread parsing over the machine's cores. The main thread parses too: with N cores there are N-1
// worker threads, and every thread takes batches from one shared queue, so a worker that is still
// loading its modules (unified, micromark, the BPE tables of the tokenizer: a few hundred ms) costs
// nothing: the main thread has started already, and the worker joins when it is ready. Batches
// shrink towards the end of the queue so that the threads finish together.
//
// For the parse cache, documents can also be returned serialized (v8.serialize, lossless like the
// structured clone that carries them between threads): a worker then serializes its own documents,
// in parallel, and sends the bytes instead of the objects.
//
// Small registries are parsed inline: starting a worker costs more than parsing a few files.
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { deserialize, serialize } from 'node:v8';
import { Worker } from 'node:worker_threads';
import { parseCapability } from '../compiler/parse.js';
import type { CapabilityDocument } from '../compiler/types.js';

/** Up to this many files, one thread; every further INLINE_LIMIT files may use one more core. */
const INLINE_LIMIT = 64;

export interface ParseInput {
  path: string;
  content: string;
}

/** Messages between the main thread and a parse worker (cli/parse-worker.ts). */
export type ToWorker = { start: number; files: ParseInput[]; serialize: boolean };
export type FromWorker =
  | { type: 'ready' }
  | { type: 'parsed'; start: number; documents: CapabilityDocument[] }
  /** `bytes` holds the serialized documents back to back; document i is bytes[ends[i-1] ?? 0, ends[i]). */
  | { type: 'serialized'; start: number; bytes: ArrayBuffer; ends: number[] }
  | { type: 'failed'; start: number; message: string; stack?: string };

/** Several serialized documents in one transferable buffer. */
export function packSerialized(documents: readonly CapabilityDocument[]): { bytes: ArrayBuffer; ends: number[] } {
  const parts = documents.map((document) => serialize(document));
  const ends: number[] = [];
  let total = 0;
  for (const part of parts) ends.push((total += part.byteLength));
  const bytes = new Uint8Array(total);
  parts.forEach((part, index) => bytes.set(part, ends[index]! - part.byteLength));
  return { bytes: bytes.buffer, ends };
}

/** How many threads (main included) to use for `fileCount` files. */
export function threadCount(fileCount: number, cores = availableParallelism()): number {
  return Math.max(1, Math.min(cores, Math.ceil(fileCount / INLINE_LIMIT)));
}

const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export interface ParsedAndSerialized {
  documents: CapabilityDocument[];
  /** v8.serialize of each document (for the parse cache). */
  serialized: Uint8Array[];
}

export async function parseInWorkers(files: readonly ParseInput[], options: { threads?: number } = {}): Promise<CapabilityDocument[]> {
  return (await parseFiles(files, { ...options, serialize: false })).documents;
}

/** Parse, and also return every document serialized with v8.serialize. */
export async function parseAndSerialize(files: readonly ParseInput[], options: { threads?: number } = {}): Promise<ParsedAndSerialized> {
  const { documents, serialized } = await parseFiles(files, { ...options, serialize: true });
  return { documents, serialized: serialized! };
}

async function parseFiles(
  files: readonly ParseInput[],
  options: { threads?: number; serialize: boolean },
): Promise<{ documents: CapabilityDocument[]; serialized?: Uint8Array[] }> {
  const documents: (CapabilityDocument | undefined)[] = new Array<CapabilityDocument | undefined>(files.length);
  const serialized: Uint8Array[] | undefined = options.serialize ? new Array<Uint8Array>(files.length) : undefined;
  const parseHere = (start: number, end: number): void => {
    for (let index = start; index < end; index += 1) {
      const document = parseCapability(files[index]!.path, files[index]!.content);
      documents[index] = document;
      if (serialized) serialized[index] = serialize(document);
    }
  };
  const finish = (): { documents: CapabilityDocument[]; serialized?: Uint8Array[] } => ({
    documents: documents.map((document, index) => {
      if (!document) throw new Error(`parse: no result for ${files[index]!.path}`);
      return document;
    }),
    ...(serialized ? { serialized } : {}),
  });

  const threads = options.threads ?? threadCount(files.length);
  const workerUrl = new URL('./parse-worker.js', import.meta.url);
  // Running from TypeScript sources (tests) there is no compiled worker: parse inline.
  if (threads <= 1 || files.length === 0 || !existsSync(fileURLToPath(workerUrl))) {
    parseHere(0, files.length);
    return finish();
  }

  let next = 0;
  /** The next batch [start, end) of the queue, or undefined when it is empty. */
  const take = (): [number, number] | undefined => {
    if (next >= files.length) return undefined;
    const remaining = files.length - next;
    const size = Math.max(4, Math.min(32, Math.ceil(remaining / (threads * 4))));
    const start = next;
    next = Math.min(files.length, next + size);
    return [start, next];
  };

  const workers: Worker[] = [];
  let failure: Error | undefined;
  let inFlight = 0;
  let settle: (() => void) | undefined;
  const drained = new Promise<void>((resolve) => (settle = resolve));
  const checkDrained = (): void => {
    if ((failure || next >= files.length) && inFlight === 0) settle?.();
  };

  try {
    for (let i = 1; i < threads; i += 1) {
      const worker = new Worker(workerUrl);
      workers.push(worker);
      let busy = 0;
      // Two batches in flight per worker, so that it never waits for the main thread, which
      // answers messages only between its own batches.
      const feed = (): void => {
        while (!failure && busy < 2) {
          const batch = take();
          if (!batch) break;
          const message: ToWorker = { start: batch[0], files: files.slice(batch[0], batch[1]), serialize: options.serialize };
          worker.postMessage(message);
          busy += 1;
          inFlight += 1;
        }
        checkDrained();
      };
      worker.on('message', (message: FromWorker) => {
        if (message.type === 'ready') return feed();
        busy -= 1;
        inFlight -= 1;
        if (message.type === 'failed') {
          // The same error an inline parse would have thrown.
          failure ??= Object.assign(new Error(message.message), message.stack ? { stack: message.stack } : {});
        } else if (message.type === 'serialized') {
          let from = 0;
          message.ends.forEach((end, offset) => {
            const bytes = new Uint8Array(message.bytes, from, end - from);
            documents[message.start + offset] = deserialize(bytes) as CapabilityDocument;
            serialized![message.start + offset] = bytes;
            from = end;
          });
        } else {
          message.documents.forEach((document, offset) => (documents[message.start + offset] = document));
        }
        feed();
      });
      worker.on('error', (error) => {
        failure ??= error;
        inFlight -= busy;
        busy = 0;
        checkDrained();
      });
      worker.on('exit', (code) => {
        if (busy > 0) {
          failure ??= new Error(`parse worker exited with code ${code}`);
          inFlight -= busy;
          busy = 0;
          checkDrained();
        }
      });
    }

    // The main thread's share: batch after batch, answering the workers in between.
    for (let batch = take(); batch && !failure; batch = take()) {
      parseHere(batch[0], batch[1]);
      await yieldToEventLoop();
    }
    checkDrained();
    await drained;
    if (failure) throw failure;
  } finally {
    await Promise.all(workers.map((worker) => worker.terminate()));
  }
  return finish();
}
