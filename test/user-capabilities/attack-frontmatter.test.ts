// Hostile frontmatter: YAML escapes put in a value what the Markdown itself does not contain (the
// save checks the Markdown for NUL and lone surrogates). PostgreSQL refuses NUL in text and JSON,
// so such a save failed as "store-unavailable" and marked the store's health `writes-failing`; a
// lone surrogate was acknowledged and then served as U+FFFD by both stores. Each is a diagnostic now.
import { describe, expect, it } from 'vitest';
import { aliceOnFreshStore, ATTACK_BACKENDS } from './attack-backends.js';
import { WEEKLY_DIGEST } from './harness.js';

const HOSTILE: [string, string, string][] = [
  ['a NUL in name', WEEKLY_DIGEST.replace('name: Weekly digest', 'name: "Weekly\\0digest"'), '`name` contains a NUL character'],
  ['a lone surrogate in name', WEEKLY_DIGEST.replace('name: Weekly digest', 'name: "Weekly\\uD800digest"'), '`name` contains a lone UTF-16 surrogate'],
  ['a NUL in a trigger', WEEKLY_DIGEST.replace('  - send my weekly digest', '  - "send my\\0 weekly digest"'), '`whenToUse.0` contains a NUL character'],
  ['a lone surrogate in a trigger', WEEKLY_DIGEST.replace('  - send my weekly digest', '  - "send my\\uDC00 digest"'), '`whenToUse.0` contains a lone UTF-16'],
  ['a NUL in a step', WEEKLY_DIGEST.replace('step: report', 'step: "rep\\0ort"'), '`toolBindings.0.step` contains a NUL character'],
  ['a NUL in description', WEEKLY_DIGEST.replace(/^description: (.*)$/m, 'description: "\\0$1"'), '`description` contains a NUL character'],
];

for (const { name, make } of ATTACK_BACKENDS) {
  describe(`hostile frontmatter escapes: ${name}`, () => {
    const start = aliceOnFreshStore(make);

    it.each(HOSTILE)('%s is a diagnostic, nothing is stored, and the store stays healthy', async (_label, markdown, message) => {
      const { alice, store } = await start();
      const answer = await alice.json('save_user_capability', { markdown });
      expect(answer.success).toBe(false);
      expect(answer.code).toBeUndefined();
      const diagnostics = answer.diagnostics as { ruleId: string; message: string; line: number }[];
      expect(diagnostics.some((d) => d.ruleId === 'user-frontmatter' && d.message.includes(message))).toBe(true);
      expect(store.health()).toEqual({ status: 'ok' });
      expect(await store.countByOwner('key:alice')).toBe(0);
      // The same document without the escape saves, and is served as saved.
      const saved = await alice.json('save_user_capability', { markdown: WEEKLY_DIGEST });
      expect(saved.success).toBe(true);
    });

    it('a well-formed astral character in the frontmatter is kept byte for byte', async () => {
      const { alice, store } = await start();
      const saved = await alice.json('save_user_capability', { markdown: WEEKLY_DIGEST.replace('name: Weekly digest', 'name: "Weekly \\U0001F4C5 digest"') });
      expect(saved.success).toBe(true);
      const record = await store.get(saved.capabilityId as string);
      expect(record?.name).toBe('Weekly \u{1F4C5} digest');
    });
  });
}
