// evals.yaml is read and checked but never served: the manifest (and its revision) of a registry
// is byte-identical with and without evals; runEvals ranks over the whole catalog.
import { describe, expect, it } from 'vitest';
import { formatEvalReport } from '../compiler/evals/format.js';
import { compileRegistry, emitManifest } from '../compiler/compile.js';
import { runEvals } from '../compiler/evals/run.js';
import { serializeManifest } from '../compiler/manifest.js';
import { protocol, registryInput } from './support/registry.js';

const files = {
  'capabilities/alpha/PROTOCOL.md': protocol({ id: 'alpha', name: 'Weekly reports', whenToUse: ['write my weekly report'] }),
  'capabilities/beta/PROTOCOL.md': protocol({ id: 'beta', name: 'Reminders', whenToUse: ['remind me to call someone'] }),
};
const options = { source: null, generator: 'test' };

describe('evals', () => {
  it('do not change the manifest or its revision', () => {
    const without = emitManifest(compileRegistry(registryInput(files)), options);
    const withEvals = compileRegistry(registryInput({ ...files, 'capabilities/alpha/evals.yaml': 'shouldMatch: [weekly report please]\n' }));
    expect(withEvals.registry.evals).toHaveLength(1);
    expect(serializeManifest(emitManifest(withEvals, options))).toBe(serializeManifest(without));
  });

  it('rank each request over the whole catalog: rank, ranking and the scores', () => {
    const result = compileRegistry(
      registryInput({
        ...files,
        'capabilities/alpha/evals.yaml': 'top: 1\nshouldMatch: [weekly report please, remind me to call mum]\nshouldNotMatch: [remind me]\n',
      }),
    );
    const report = runEvals(result.registry);
    expect(report.requests.map(({ request, rank, ranking, passed }) => ({ request, rank, first: ranking[0], passed }))).toEqual([
      { request: 'weekly report please', rank: 1, first: 'alpha', passed: true },
      { request: 'remind me to call mum', rank: null, first: 'beta', passed: false },
      { request: 'remind me', rank: null, first: 'beta', passed: true },
    ]);
    expect(report.capabilities).toEqual([
      { id: 'alpha', file: 'capabilities/alpha/evals.yaml', shouldMatch: 2, shouldNotMatch: 1, recallAt1: 0.5, recallAt3: 0.5, mrr: 0.5, failed: 1 },
    ]);
  });
});

describe('eval markdown: fits a pull-request comment', () => {
  it('lists capabilities and misses within 65,536 characters in all, and says how many it left out', () => {
    // 2,000 capabilities, each with a miss of a 500-character request (700 generated capabilities
    // without a miss already made a 42,795-character summary).
    const ids = Array.from({ length: 2000 }, (_, i) => `capability-${String(i).padStart(4, '0')}`);
    const scores = { shouldMatch: 1, shouldNotMatch: 0, recallAt1: 0, recallAt3: 0, mrr: 0, failed: 1 };
    const requests = ids.map((id) => ({
      capabilityId: id,
      file: `capabilities/${id}/evals.yaml`,
      line: 2,
      column: 5,
      kind: 'shouldMatch' as const,
      request: 'find it '.repeat(62),
      top: 3,
      rank: null,
      ranking: [ids[0]!],
      passed: false,
    }));
    const text = formatEvalReport(
      { requests, capabilities: ids.map((id) => ({ id, file: `capabilities/${id}/evals.yaml`, ...scores })), total: scores },
      'markdown',
    );
    expect(text.length).toBeLessThan(65_536);
    const rows = text.split('\n').filter((line) => line.startsWith('| `capability-'));
    const moreRows = Number(/\n\| … and (\d+) more \(`--format json` lists them all\) \|/.exec(text)?.[1]);
    expect(rows.length + moreRows).toBe(2000);
    const misses = text.split('\n').filter((line) => line.startsWith('| find it'));
    const moreMisses = Number(/\n… and (\d+) more \(`--format json` lists them all\)\.\n/.exec(text)?.[1]);
    expect(misses.length + moreMisses).toBe(2000);
    expect(text).toContain('| **all** | 1 + 0 |');
  });
});

describe('eval stylish: any number of capabilities', () => {
  it('aligns 200,000 capability rows (Math.max over them overflowed its arguments: RangeError)', () => {
    const scores = { shouldMatch: 1, shouldNotMatch: 0, recallAt1: 1, recallAt3: 1, mrr: 1, failed: 0 };
    const capabilities = Array.from({ length: 200_000 }, (_, i) => ({ id: `c${i}`, file: `capabilities/c${i}/evals.yaml`, ...scores }));
    const lines = formatEvalReport({ requests: [], capabilities, total: scores }, 'stylish').split('\n');
    expect(lines[0]).toBe('c0          recall@1 1.00  recall@3 1.00  MRR 1.00  1 + 0 requests');
    expect(lines[199_999]).toBe('c199999     recall@1 1.00  recall@3 1.00  MRR 1.00  1 + 0 requests');
  });
});
