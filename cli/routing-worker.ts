// A routing worker (see routing-threads.ts): answers one tree's side of the gate's routing, the
// first hit of each query over the catalog it is given, and exits.
import { parentPort, workerData } from 'node:worker_threads';
import { firstAnswers } from '../compiler/gate/routing-answers.js';
import type { RoutingWork } from './routing-threads.js';

const { catalog, queries } = workerData as RoutingWork;
parentPort?.postMessage(firstAnswers(catalog, queries));
