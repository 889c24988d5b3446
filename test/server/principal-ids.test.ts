// A principal id is an owner in the user store (`key:<id>`), like a JWT `sub`, and is held to the
// same rule: no control character (PostgreSQL refuses NUL in text, so one principal's every call
// made the store look down, /healthz degraded) and no lone UTF-16 surrogate (the stores cannot
// keep one: PostgreSQL merged two such principals into one owner, who listed and deleted each
// other's capabilities; SQLite stored an owner no read matched, so an acknowledged save could
// never be loaded or updated).
import { describe, expect, it } from 'vitest';
import { parsePrincipals } from '../../server/principals.js';

function file(id: string): string {
  return `principals:\n  - {id: ${JSON.stringify(id)}, keySha256: ${'a'.repeat(64)}, scopes: [user-capabilities:write]}\n`;
}

describe('principal ids', () => {
  it.each([
    ['a NUL', 'nul\u0000x'],
    ['a control character', 'bell\u0007'],
    ['a C1 control character', 'next\u0085line'],
    ['a lone high surrogate', 'twin\uD800'],
    ['a lone low surrogate', 'twin\uDC00'],
    ['over 256 characters', 'x'.repeat(257)],
  ])('refuses an id with %s, saying which principal', (_label, id) => {
    const parsed = parsePrincipals(file(id));
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error).toMatch(/^principals\[0\]\.id /);
  });

  it('accepts ids in any script, astral characters included', () => {
    for (const id of ['alice', 'Zoë Müller', '张伟', 'smile-😀', 'ops#1:2', 'é'.repeat(256)]) {
      const parsed = parsePrincipals(file(id));
      expect(parsed.ok, id).toBe(true);
      if (parsed.ok) expect(parsed.registry.findById(id)?.id).toBe(id);
    }
  });
});
