// The gate's routing on two threads: after the plan (compiler/gate/routing.ts: the requests, each
// tree's analyzed catalog), a worker thread indexes and searches the base tree while this thread
// does the new tree, so the two halves of the searching run side by side on two cores. The result
// is the one compareRouting gives in one thread (the same pure functions on the same data).
// Running from TypeScript sources (in-process tests) there is no compiled worker: both sides run here.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { judgeRouting, planRouting, type RoutingResult } from '../compiler/gate/routing.js';
import { firstAnswers } from '../compiler/gate/routing-answers.js';
import type { AnalyzedCapability } from '../compiler/search/fields.js';
import type { LintRegistry } from '../compiler/rule.js';

/** What a routing worker is given. */
export interface RoutingWork {
  catalog: readonly AnalyzedCapability[];
  queries: readonly string[];
}

const WORKER_URL = new URL('./routing-worker.js', import.meta.url);

/** firstAnswers in a worker thread; in this thread when there is no compiled worker. */
function answersInWorker(work: RoutingWork): Promise<(string | null)[]> {
  if (!existsSync(fileURLToPath(WORKER_URL))) return Promise.resolve(firstAnswers(work.catalog, work.queries));
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER_URL, { workerData: work });
    let answered = false;
    worker.once('message', (answers: (string | null)[]) => {
      answered = true;
      resolve(answers);
    });
    worker.once('error', reject);
    worker.once('exit', (code) => {
      if (!answered) reject(new Error(`routing worker exited with code ${code} without answering`));
    });
  });
}

export async function compareRoutingThreaded(base: LintRegistry, head: LintRegistry, against: string): Promise<RoutingResult> {
  const plan = planRouting(base, head);
  if ('result' in plan) return plan.result;
  const before = answersInWorker({ catalog: plan.base, queries: plan.queries });
  // Synchronous: the worker runs meanwhile on the other core.
  const after = firstAnswers(plan.head, plan.queries);
  return judgeRouting(plan, await before, after, against);
}
