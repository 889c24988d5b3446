// A parse worker (see parse-workers.ts): says when its modules are loaded, then parses the batches
// it is sent, in order. A parse that throws is reported with its message, so that the main thread
// fails with the same error an inline parse would have thrown.
import { parentPort } from 'node:worker_threads';
import { parseCapability } from '../compiler/parse.js';
import type { FromWorker, ToWorker } from './parse-workers.js';

const port = parentPort;
if (port) {
  port.on('message', ({ start, files }: ToWorker) => {
    let reply: FromWorker;
    try {
      reply = { type: 'parsed', start, documents: files.map((file) => parseCapability(file.path, file.content)) };
    } catch (error) {
      reply = { type: 'failed', start, message: error instanceof Error ? error.message : String(error), ...(error instanceof Error && error.stack ? { stack: error.stack } : {}) };
    }
    port.postMessage(reply);
  });
  port.postMessage({ type: 'ready' } satisfies FromWorker);
}
