import { describe, expect, it } from 'vitest';
import { canonicalJson, digestOf } from '../compiler/canonical.js';

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
  it('gives equal digests for equal data written in any key order', () => {
    expect(digestOf({ a: 1, b: [1, 2] })).toBe(digestOf({ b: [1, 2], a: 1 }));
    expect(digestOf({ a: 1 })).not.toBe(digestOf({ a: 2 }));
  });
});
