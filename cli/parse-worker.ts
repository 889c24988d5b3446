// A parse worker (see parse-workers.ts): says when its modules are loaded, then parses the batches
// it is sent, in order, and sends back the documents (or, for the parse cache, their serialized
// bytes, in one transferred buffer). A parse that throws is reported with its message, so that the
// main thread fails with the same error an inline parse would have thrown.
import { parentPort } from 'node:worker_threads';
import { parseCapability } from '../compiler/parse.js';
import { packSerialized, type FromWorker, type ToWorker } from './parse-workers.js';

const port = parentPort;
if (port) {
  port.on('message', ({ start, files, serialize }: ToWorker) => {
    let documents;
    try {
      documents = files.map((file) => parseCapability(file.path, file.content));
    } catch (error) {
      const failed: FromWorker = {
        type: 'failed',
        start,
        message: error instanceof Error ? error.message : String(error),
        ...(error instanceof Error && error.stack ? { stack: error.stack } : {}),
      };
      port.postMessage(failed);
      return;
    }
    if (!serialize) {
      port.postMessage({ type: 'parsed', start, documents } satisfies FromWorker);
      return;
    }
    const { bytes, ends } = packSerialized(documents);
    port.postMessage({ type: 'serialized', start, bytes, ends } satisfies FromWorker, [bytes]);
  });
  port.postMessage({ type: 'ready' } satisfies FromWorker);
}
