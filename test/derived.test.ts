// Kept facts (compiler/derived.ts): computed once per owner, key and context, recomputed when the
// context changes, invisible to JSON and structured clones, and kept for frozen owners too.
import { describe, expect, it, vi } from 'vitest';
import { compileRegistry, emitManifest } from '../compiler/compile.js';
import { DerivedFacts, NO_MEMO, sharedWithinCompile, type Derived } from '../compiler/derived.js';
import type { ManifestOptions } from '../compiler/manifest.js';
import { protocol, registryInput } from './support/registry.js';

describe('DerivedFacts', () => {
  it('computes a fact once per owner, key and context, and again when the context changes', () => {
    const derived = new DerivedFacts();
    const owner = { text: 'a' };
    let runs = 0;
    const count = (context: unknown): number => derived.of(owner, 'length', context, () => (runs += 1));
    const toolsets = {};
    expect([count(toolsets), count(toolsets), count(toolsets)]).toEqual([1, 1, 1]);
    expect(count({})).toBe(2);
    expect(derived.of(owner, 'other key', undefined, () => 'other')).toBe('other');
    expect(derived.of({ text: 'a' }, 'length', undefined, () => 'another owner')).toBe('another owner');
  });

  it('keeps two sessions apart, and shows nothing of its facts to JSON or a structured clone', () => {
    const owner = { text: 'a' };
    const first = new DerivedFacts();
    const second = new DerivedFacts();
    first.of(owner, 'key', undefined, () => 1);
    expect(second.of(owner, 'key', undefined, () => 2)).toBe(2);
    expect(first.of(owner, 'key', undefined, () => 3)).toBe(1);
    expect(JSON.stringify(owner)).toBe('{"text":"a"}');
    expect(structuredClone(owner)).toEqual({ text: 'a' });
    expect(Object.keys(owner)).toEqual(['text']);
  });

  it('keeps facts of an owner that cannot be extended', () => {
    const derived = new DerivedFacts();
    const owner = Object.freeze({ text: 'a' });
    let runs = 0;
    derived.of(owner, 'key', undefined, () => (runs += 1));
    derived.of(owner, 'key', undefined, () => (runs += 1));
    expect(runs).toBe(1);
  });

  it('keeps the last registry-wide fact per key while its inputs are the same, item by item', () => {
    const derived = new DerivedFacts();
    const a = {};
    const b = {};
    let runs = 0;
    const count = (inputs: unknown[]): number => derived.across('ids', inputs, () => (runs += 1));
    expect(count(['x', a, 1])).toBe(1);
    expect(count(['x', a, 1])).toBe(1); // a new array with the same items
    expect(count(['x', b, 1])).toBe(2); // an equal but different object
    expect(count(['x', b])).toBe(3); // fewer inputs
    expect(count(['x', b, 1])).toBe(4); // only the last is kept
    expect(derived.across('other', ['x', b, 1], () => 'own')).toBe('own');
    const inputs = ['y'];
    count(inputs);
    inputs.push('z'); // the inputs are copied, not kept
    expect(count(['y'])).toBe(5);
  });

  it('keeps one state per key for the session; NO_MEMO makes a new one every time', () => {
    const derived = new DerivedFacts();
    const first = derived.state('index', () => ({ entries: [] as number[] }));
    first.entries.push(1);
    expect(derived.state('index', () => ({ entries: [] as number[] })).entries).toEqual([1]);
    expect(derived.state('other', () => ({ entries: [] as number[] })).entries).toEqual([]);
    expect(new DerivedFacts().state('index', () => ({ entries: [] as number[] })).entries).toEqual([]);
    expect([derived.keeps, NO_MEMO.keeps]).toEqual([true, false]);
    NO_MEMO.state('index', () => first);
    expect(NO_MEMO.state('index', () => ({ entries: [] as number[] })).entries).toEqual([]);
  });

  it('NO_MEMO computes every time', () => {
    let runs = 0;
    const owner = {};
    NO_MEMO.of(owner, 'key', undefined, () => (runs += 1));
    NO_MEMO.of(owner, 'key', undefined, () => (runs += 1));
    NO_MEMO.across('key', [], () => (runs += 1));
    NO_MEMO.across('key', [], () => (runs += 1));
    expect(runs).toBe(4);
  });
});

describe('sharedWithinCompile', () => {
  it('keeps the facts under shared keys for their owner, and computes every other fact every time', () => {
    const derived = sharedWithinCompile((key) => key.startsWith('shared:'));
    const owner = { text: 'a' };
    let runs = 0;
    const fact = (key: string): number => derived.of(owner, key, undefined, () => (runs += 1));
    expect([fact('shared:x'), fact('shared:x'), fact('other'), fact('other')]).toEqual([1, 1, 2, 3]);
    expect(derived.of({ text: 'a' }, 'shared:x', undefined, () => 'another owner')).toBe('another owner');
    expect(derived.keeps).toBe(false);
    expect(derived.state('key', () => ({})) === derived.state('key', () => ({}))).toBe(false);
  });
});

describe('a one-shot compile', () => {
  const LONG = 'Before any write, show the user the exact change with old and new values and wait for an explicit yes.';
  const input = registryInput({
    'capabilities/alpha/PROTOCOL.md': protocol({ id: 'alpha' }, `${LONG}\n\n- ${LONG} Then log it.\n\nNever guess.\n`),
    'capabilities/beta/PROTOCOL.md': protocol(
      { id: 'beta' },
      `A different paragraph that is long enough to be compared with the others, and is.\n\nNever guess.\n`,
    ),
  });
  const source = { repository: 'test', commit: 'none' } as unknown as ManifestOptions['source'];

  /** The texts normalized (NFKC) while the manifest is built, and the manifest's paragraphs. */
  function manifestOf(derived?: Derived): { normalized: number; paragraphs: unknown[] } {
    const result = compileRegistry(input, derived ? { derived } : {});
    const normalize = vi.spyOn(String.prototype, 'normalize');
    try {
      const manifest = emitManifest(result, { source, generator: 'test' });
      return { normalized: normalize.mock.calls.filter(([form]) => form === 'NFKC').length, paragraphs: manifest.capabilities.map((each) => each.paragraphs) };
    } finally {
      normalize.mockRestore();
    }
  }

  it("writes the manifest's paragraph fingerprints from duplicate-content's, without normalizing a paragraph again", () => {
    const shared = manifestOf();
    const computedAgain = manifestOf(NO_MEMO);
    expect(shared.normalized).toBe(0);
    expect(computedAgain.normalized).toBeGreaterThan(0);
    expect(shared.paragraphs).toEqual(computedAgain.paragraphs);
    expect(shared.paragraphs.flat().length).toBe(3);
  });
});
