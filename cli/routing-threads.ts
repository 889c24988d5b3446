// The gate's routing on worker threads: after the plan (compiler/gate/routing.ts: the requests, each
// tree's analyzed catalog), one worker indexes and searches the base tree and another the new tree,
// while this thread runs the new tree's lint rules. The result is the one compareRouting gives in
// one thread (the same pure functions on the same data). The search starts before lint has said
// whether the new tree has errors (routing is then not compared): a check that fails lint ends the
// workers unheard.
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

/** One tree's first answers, being searched. */
interface Answers {
  answers: Promise<(string | null)[]>;
  /** End the search; `answers` then never settles. */
  stop(): void;
}

const WORKER_URL = new URL('./routing-worker.js', import.meta.url);

/** firstAnswers in a worker thread; in this thread when there is no compiled worker. */
function answersInWorker(work: RoutingWork): Answers {
  if (!existsSync(fileURLToPath(WORKER_URL))) {
    const answers = firstAnswers(work.catalog, work.queries);
    return { answers: Promise.resolve(answers), stop: () => {} };
  }
  const worker = new Worker(WORKER_URL, { workerData: work });
  let stopped = false;
  const answers = new Promise<(string | null)[]>((resolve, reject) => {
    let answered = false;
    worker.once('message', (found: (string | null)[]) => {
      answered = true;
      resolve(found);
    });
    worker.once('error', (error) => {
      if (!stopped) reject(error);
    });
    worker.once('exit', (code) => {
      if (!answered && !stopped) reject(new Error(`routing worker exited with code ${code} without answering`));
    });
  });
  return {
    answers,
    stop: () => {
      stopped = true;
      void worker.terminate();
    },
  };
}

/** The routing comparison under way: its result, or stopped unheard. */
export interface RoutingInProgress {
  result(): Promise<RoutingResult>;
  stop(): void;
}

/**
 * Plan the routing comparison here and search both trees in worker threads. The caller either
 * awaits `result()` or calls `stop()`; a worker that fails is reported by `result()` only.
 */
export function startRouting(base: LintRegistry, head: LintRegistry, against: string): RoutingInProgress {
  const plan = planRouting(base, head);
  if ('result' in plan) return { result: () => Promise.resolve(plan.result), stop: () => {} };
  const before = answersInWorker({ catalog: plan.base, queries: plan.queries });
  const after = answersInWorker({ catalog: plan.head, queries: plan.queries });
  const judged = Promise.all([before.answers, after.answers]).then(([was, now]) => judgeRouting(plan, was, now, against));
  // Not awaited when the check ends before it (lint errors, or a throw): never an unhandled rejection.
  judged.catch(() => {});
  return {
    result: () => judged,
    stop: () => {
      before.stop();
      after.stop();
    },
  };
}
