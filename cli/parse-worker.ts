// A parse worker (see parse-workers.ts): says when its modules are loaded, then parses the batches
// it is sent, in order, and answers each document as soon as it is parsed (the main thread times
// every document against its budget): the document itself or, for the parse cache, its serialized
// bytes in a transferred buffer. A parse that throws is reported with its message, so that the
// main thread fails with the same error an inline parse would have thrown. It does not count the
// body's tokens (the main thread does, as the documents come in), so it never loads the tokenizer.
import { parentPort } from 'node:worker_threads';
import { parseUncounted } from '../compiler/parse-markdown.js';
import { serializeDocument, type FromWorker, type ToWorker } from './parse-workers.js';

const port = parentPort;
if (port) {
  port.on('message', ({ indices, files, serialize }: ToWorker) => {
    for (const [offset, file] of files.entries()) {
      const index = indices[offset]!;
      let document;
      try {
        document = parseUncounted(file.path, file.content);
      } catch (error) {
        const failed: FromWorker = {
          type: 'failed',
          index,
          message: error instanceof Error ? error.message : String(error),
          ...(error instanceof Error && error.stack ? { stack: error.stack } : {}),
        };
        port.postMessage(failed);
        return;
      }
      if (!serialize) {
        port.postMessage({ type: 'parsed', index, document } satisfies FromWorker);
        continue;
      }
      const bytes = serializeDocument(document);
      port.postMessage({ type: 'serialized', index, bytes } satisfies FromWorker, [bytes]);
    }
  });
  port.postMessage({ type: 'ready' } satisfies FromWorker);
}
