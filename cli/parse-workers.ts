// Spread parsing over the machine's cores with worker threads. Small batches are parsed inline:
// starting a worker costs more than parsing a few files.
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { parseCapability } from '../compiler/parse.js';
import type { CapabilityDocument } from '../compiler/types.js';

const INLINE_LIMIT = 64;

export async function parseInWorkers(files: { path: string; content: string }[]): Promise<CapabilityDocument[]> {
  const workerCount = Math.min(availableParallelism(), Math.ceil(files.length / INLINE_LIMIT));
  const workerUrl = new URL('./parse-worker.js', import.meta.url);
  // Running from TypeScript sources (tests) there is no compiled worker: parse inline.
  if (workerCount <= 1 || !existsSync(fileURLToPath(workerUrl))) return files.map((file) => parseCapability(file.path, file.content));
  const chunks: { path: string; content: string }[][] = Array.from({ length: workerCount }, () => []);
  files.forEach((file, index) => chunks[index % workerCount]!.push(file));
  const results = await Promise.all(
    chunks.map(
      (chunk) =>
        new Promise<CapabilityDocument[]>((resolve, reject) => {
          const worker = new Worker(workerUrl, { workerData: chunk });
          worker.once('message', (documents: CapabilityDocument[]) => {
            resolve(documents);
            void worker.terminate();
          });
          worker.once('error', reject);
          worker.once('exit', (code) => {
            if (code !== 0) reject(new Error(`parse worker exited with code ${code}`));
          });
        }),
    ),
  );
  const byPath = new Map<string, CapabilityDocument>();
  for (const list of results) for (const document of list) byPath.set(document.file, document);
  return files.map((file) => byPath.get(file.path)!);
}
