import { parentPort, workerData } from 'node:worker_threads';
import { parseCapability } from '../compiler/parse.js';

const files = workerData as { path: string; content: string }[];
parentPort?.postMessage(files.map((file) => parseCapability(file.path, file.content)));
