// A parse worker (see parse-workers.ts): says when its modules are loaded, then parses the batches
// it is sent, in order, and answers each document as soon as it is parsed (the main thread times
// every document against its budget): the document itself or, for the parse cache, its serialized
// bytes in a transferred buffer. A parse that throws is reported with its message, so that the
// main thread fails with the same error an inline parse would have thrown. It does not count the
// bodies' tokens as it parses (the main thread does, once the parse is over), so it loads the
// tokenizer only when it is asked to count bodies: for a large registry, the main thread hands one
// worker half of them once the parse is over.
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { parseUncounted } from '../compiler/parse-markdown.js';
import { MAX_WARM_UP_ROUNDS, serializeDocument, type FromWorker, type ToWorker, type WorkerStart } from './parse-workers.js';

const port = parentPort;
if (port) {
  port.on('message', (message: ToWorker) => {
    if (message.type === 'count') {
      void count(port, message.bodies);
      return;
    }
    const { indices, files, serialize } = message;
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
  // Warm the parser's code up first (see WorkerStart), on a protocol of our own: never on a
  // registry's files, which could make the worker take its time before it is even ready.
  const rounds = Math.min(MAX_WARM_UP_ROUNDS, (workerData as WorkerStart | undefined)?.warmUpRounds ?? 0);
  for (let round = 0; round < rounds; round += 1) parseUncounted('capabilities/warm-up/PROTOCOL.md', warmUpProtocol(round));
  port.postMessage({ type: 'ready' } satisfies FromWorker);
}

/** Answers the token counts of `bodies` (the tokenizer is loaded by the first count). */
async function count(port: MessagePort, bodies: string[]): Promise<void> {
  try {
    const { countTokens } = await import('../compiler/tokens.js');
    port.postMessage({ type: 'counted', counts: bodies.map((body) => countTokens(body)) } satisfies FromWorker);
  } catch (error) {
    port.postMessage({ type: 'failed', index: -1, message: error instanceof Error ? error.message : String(error) } satisfies FromWorker);
  }
}

/** A protocol with what real ones have (frontmatter, headings, a tools table, lists, links, code, emphasis), varied by round. */
function warmUpProtocol(round: number): string {
  const rows = Array.from({ length: 10 }, (_, i) => `| \`tool_${round}_${i}\` | Reads the *record* ${i} and returns it | \`STATE_${i}\` |`);
  const steps = Array.from(
    { length: 12 },
    (_, i) => `${i + 1}. Call \`tool_${round}_${i % 10}\` with the **id** from step ${i}; see [the guide](capability:guide-${i}).`,
  );
  return [
    '---',
    `id: warm-up-${round}`,
    'name: Warm up',
    'description: Parses once so that the parser code is optimized.',
    'whenToUse:',
    '  - warm the parser up',
    'requiredToolsets: [records]',
    'protocol_version: 1.0.0',
    '---',
    '',
    `# Warm up ${round}`,
    '',
    'A paragraph with _emphasis_, `code`, a [link](./notes.md) and a line',
    'that goes on for a while so that the inline tokenizer has text to read.',
    '',
    '## Tools',
    '',
    '| Tool | What it does | State |',
    '| --- | --- | --- |',
    ...rows,
    '',
    '## Steps',
    '',
    ...steps,
    '',
    '- Do not guess a value; ask for it.',
    '- Never skip the confirmation.',
    '  - A nested item with `STATE_1`.',
    '',
    '> A quote that says what to do when nothing else applies.',
    '',
    '```json',
    '{ "example": true }',
    '```',
    '',
  ].join('\n');
}
