import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CanonicalJsonError, MAX_JSON_DEPTH, canonicalJson, canonicalJsonBytes, digestOf, tooDeepPath } from '../compiler/canonical.js';
import { runs } from './support/property.js';

describe('canonicalJson', () => {
  it('sorts keys at every depth and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } })).toBe('{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}');
  });
  it('drops undefined members like JSON does, and writes undefined array items as null', () => {
    expect(canonicalJson({ a: undefined, b: [undefined, 1] })).toBe('{"b":[null,1]}');
  });
  it('orders keys by UTF-16 code units and escapes like JSON.stringify', () => {
    expect(canonicalJson({ é: 1, Z: 2, a: '\u2028"' })).toBe('{"Z":2,"a":"\u2028\\"","é":1}');
  });
  it('refuses non-finite numbers instead of writing null', () => {
    expect(() => canonicalJson({ a: Number.NaN })).toThrow(/non-finite/);
  });
  it('lays out over lines exactly as parsing the canonical JSON and writing it indented would', () => {
    // serializeManifest relies on it: the manifest on disk is the indented form, written in one pass.
    fc.assert(
      fc.property(fc.jsonValue(), fc.integer({ min: 0, max: 4 }), (value, indent) => {
        expect(canonicalJson(value, indent)).toBe(JSON.stringify(JSON.parse(canonicalJson(value)), null, indent));
      }),
      { numRuns: runs(500) },
    );
    expect(canonicalJson({ b: [1, { d: undefined, c: '\ud800' }], a: {} }, 2)).toBe(
      '{\n  "a": {},\n  "b": [\n    1,\n    {\n      "c": "\\ud800"\n    }\n  ]\n}',
    );
  });
  it('digests exactly the canonical JSON, which it hashes in pieces', () => {
    const digest = (value: unknown): string => `sha256:${createHash('sha256').update(canonicalJson(value)).digest('hex')}`;
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(digestOf(value)).toBe(digest(value));
        const wrapped = { items: Array.from({ length: 70 }, () => [value]), value };
        expect(digestOf(wrapped)).toBe(digest(wrapped));
      }),
      { numRuns: runs(500) },
    );
    // What JSON.stringify leaves out or writes as null, at every level the digest opens.
    const sparse = {
      a: undefined,
      b: [...Array.from({ length: 70 }, () => undefined), () => 1, Symbol('s'), new Date(0), 1],
      c: { d: undefined, e: [Symbol('s')] },
      f: new Date(0),
      g: '\ud800',
    };
    expect(digestOf(sparse)).toBe(digest(sparse));
    // Keys that are array indices come first in any JavaScript object, and so in canonicalJson.
    const indexKeys = { b: 1, 10: { 2: 0, a: 1 }, 9: [3], '': 4, long: Array.from({ length: 70 }, (_, index) => ({ [index]: index, a: 0 })) };
    expect(digestOf(indexKeys)).toBe(digest(indexKeys));
    expect(() => digestOf({ a: [Number.POSITIVE_INFINITY] })).toThrow(/non-finite/);
  });
  it('gives the bytes of canonicalJson at any indentation, made in pieces', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.integer({ min: -1, max: 12 }), (value, indent) => {
        expect(canonicalJsonBytes(value, indent).toString('utf8')).toBe(canonicalJson(value, indent));
        // A member that is a long array is laid out item by item (OPENED_ARRAY_ITEMS), a short one is not.
        const wrapped = { long: Array.from({ length: 70 }, (_, index) => (index % 2 === 0 ? value : { value })), short: [value, []], value, empty: {} };
        expect(canonicalJsonBytes(wrapped, indent).toString('utf8')).toBe(canonicalJson(wrapped, indent));
      }),
      { numRuns: runs(500) },
    );
    // Larger than a chunk, with pieces that span lines at every depth the layout opens, and text
    // that needs two bytes in UTF-16 and four in UTF-8.
    const large = {
      capabilities: Array.from({ length: 80 }, (_, index) => ({ id: `c-${index}`, protocol: `→ 🙂 ${'step\n'.repeat(500)}`, tags: ['a', { b: [1] }] })),
      10: [undefined, null],
      rules: { 'negative-rules': { level: 'warn', options: {} } },
    };
    for (const indent of [undefined, 0, 2, 4]) {
      expect(canonicalJsonBytes(large, indent).equals(Buffer.from(canonicalJson(large, indent), 'utf8'))).toBe(true);
      expect(canonicalJsonBytes(large.capabilities, indent, '\n').equals(Buffer.from(`${canonicalJson(large.capabilities, indent)}\n`, 'utf8'))).toBe(true);
    }
    expect(digestOf(large)).toBe(`sha256:${createHash('sha256').update(canonicalJson(large)).digest('hex')}`);
  });
  it('gives equal digests for equal data written in any key order', () => {
    expect(digestOf({ a: 1, b: [1, 2] })).toBe(digestOf({ b: [1, 2], a: 1 }));
    expect(digestOf({ a: 1 })).not.toBe(digestOf({ a: 2 }));
  });
});

describe('nesting depth', () => {
  const nested = (depth: number): unknown => {
    let value: unknown = 'leaf';
    for (let level = 0; level < depth; level += 1) value = level % 2 === 0 ? [value] : { k: value };
    return value;
  };

  it('finds the first value nested deeper than the limit, however deep the value goes', () => {
    expect(tooDeepPath(nested(MAX_JSON_DEPTH))).toBeUndefined();
    const path = tooDeepPath({ fine: [1, 2], deep: nested(MAX_JSON_DEPTH) });
    expect(path?.slice(0, 2)).toEqual(['deep', 'k']);
    expect(path).toHaveLength(MAX_JSON_DEPTH);
    // 200,000 levels would overflow a walk that did not stop at the limit.
    expect(tooDeepPath(nested(200_000))).toHaveLength(MAX_JSON_DEPTH);
  });
  it('finds the path a walk over every member (last first, depth first) finds first (property)', () => {
    // The definition, as a walk with a stack of its own: the first node deeper than the limit that it pops.
    const byStack = (value: unknown, maxDepth: number): (string | number)[] | undefined => {
      const stack: { value: unknown; depth: number; path: (string | number)[] }[] = [{ value, depth: 1, path: [] }];
      for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
        if (node.value === null || typeof node.value !== 'object') continue;
        if (node.depth > maxDepth) return node.path;
        for (const [key, member] of Object.entries(node.value))
          stack.push({ value: member, depth: node.depth + 1, path: [...node.path, Array.isArray(node.value) ? Number(key) : key] });
      }
      return undefined;
    };
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), fc.integer({ min: 1, max: 5 }), (value, maxDepth) => {
        expect(tooDeepPath(value, maxDepth)).toEqual(byStack(value, maxDepth));
      }),
      { numRuns: runs(1000) },
    );
  });
  it('counts nesting, not size: a wide value is fine', () => {
    expect(tooDeepPath(Array.from({ length: 10_000 }, (_, index) => ({ index, list: [index] })))).toBeUndefined();
  });
  it('refuses a too-deep value with a typed error instead of overflowing the stack', () => {
    for (const depth of [MAX_JSON_DEPTH + 1, 5_000, 100_000]) {
      let caught: unknown;
      try {
        canonicalJson({ a: nested(depth) });
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(CanonicalJsonError);
      expect((caught as CanonicalJsonError).code).toBe('too-deep');
      expect((caught as Error).message).toContain(`deeper than ${MAX_JSON_DEPTH}`);
    }
    expect(() => digestOf(nested(10_000))).toThrow(CanonicalJsonError);
    expect(() => canonicalJsonBytes(nested(10_000))).toThrow(CanonicalJsonError);
    expect(canonicalJson(nested(MAX_JSON_DEPTH - 1))).toContain('leaf');
  });
});
