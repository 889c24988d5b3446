// Item 22: user capabilities are checked with the registry's rule settings and against the bodies
// of the capabilities the author can see, both carried in the manifest (resolved settings;
// paragraph fingerprints, not text). A real registry is compiled and its manifest serialized and
// parsed back, as the server loads it.
import { describe, expect, it } from 'vitest';
import { compileRegistry, emitManifest } from '../../compiler/compile.js';
import { parseConfig } from '../../compiler/config.js';
import { manifestIntegrity, parseManifest, serializeManifest } from '../../compiler/manifest.js';
import type { Manifest } from '../../compiler/types.js';
import { compileUserCapability, USER_CAPABILITY_RULES, visibleCatalog } from '../../compiler/user/compile-user.js';
import { protocol, registryInput } from '../support/registry.js';

const COPIED = 'Always confirm the reporting period with the user before generating anything, and show the draft report first.';
const SECRET = 'The payroll export runs on the third business day and goes only to the finance controller mailbox.';

function registryManifest(config = ''): Manifest {
  const input = registryInput({
    'capabilities/work-reporting/PROTOCOL.md': protocol(
      { id: 'work-reporting', requiredToolsets: ['work-logs'] },
      `\n${COPIED}\n\nDo not guess; guessing is forbidden.\n`,
    ),
    'capabilities/payroll/PROTOCOL.md': protocol({ id: 'payroll', requiredToolsets: ['automation'] }, `\n${SECRET}\n\nDo not guess; guessing is forbidden.\n`),
  });
  const result = compileRegistry(input, { config: parseConfig(config) });
  expect(result.errorCount).toBe(0);
  const parsed = parseManifest(serializeManifest(emitManifest(result, { source: null, generator: 'test' })));
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.manifest;
}

function save(manifest: Manifest, body: string, visible: (id: string) => boolean = () => true) {
  const markdown = `---\nname: Mine\ndescription: My workflow.\nwhenToUse: [do my thing]\nuses: [work-reporting]\n---\n\n1. Load [reporting](capability:work-reporting).\n\n${body}\n`;
  return compileUserCapability(markdown, visibleCatalog(manifest, visible), manifest.rules ? { settings: manifest.rules } : {});
}

describe('duplicate-content on user capabilities', () => {
  it('reports a paragraph copied from a visible platform protocol, pointing at the original', () => {
    const manifest = registryManifest();
    const result = save(manifest, `${COPIED}\n\nNever guess.`);
    const duplicates = result.diagnostics.filter((d) => d.ruleId === 'duplicate-content');
    expect(duplicates).toEqual([
      expect.objectContaining({
        severity: 'warning',
        line: 10,
        column: 1,
        message: expect.stringContaining('is copied from capability "work-reporting" (capabilities/work-reporting/PROTOCOL.md:') as unknown,
      }),
    ]);
  });

  it('compares only with capabilities the author can see, and never quotes their text', () => {
    const manifest = registryManifest();
    const hidden = save(manifest, `${SECRET}\n\nNever guess.`, (id) => id !== 'payroll');
    expect(hidden.diagnostics.filter((d) => d.ruleId === 'duplicate-content')).toEqual([]);
    const seen = save(manifest, `${SECRET}\n\nNever guess.`);
    expect(seen.diagnostics.filter((d) => d.ruleId === 'duplicate-content')).toHaveLength(1);
    // The manifest holds fingerprints, not the text (apart from the protocol itself, which the
    // worker is never sent).
    const standIn = manifest.capabilities.find((c) => c.id === 'payroll')!;
    expect(JSON.stringify({ ...standIn, protocol: '' })).not.toContain('payroll export');
    expect(standIn.paragraphs).toEqual([[expect.stringMatching(/^[0-9a-f]{16}$/), expect.any(Number)]]);
  });

  it('follows the registry minLength, and carries nothing when the rule is off', () => {
    expect(
      save(registryManifest('rules:\n  duplicate-content: [warn, {minLength: 500}]\n'), `${COPIED}\n\nNever guess.`).diagnostics.filter(
        (d) => d.ruleId === 'duplicate-content',
      ),
    ).toEqual([]);
    const off = registryManifest('rules:\n  duplicate-content: off\n');
    expect(off.capabilities.some((c) => c.paragraphs !== undefined)).toBe(false);
    expect(save(off, `${COPIED}\n\nNever guess.`).diagnostics.filter((d) => d.ruleId === 'duplicate-content')).toEqual([]);
  });
});

describe("the registry's capreg.config.yaml applies to user capabilities", () => {
  it('turns a rule off, sets its level, and uses its options (markers, budgets)', () => {
    const noProhibition = 'Collect the numbers and send them.';
    expect(save(registryManifest(), noProhibition).diagnostics.map((d) => d.ruleId)).toContain('negative-rules');
    expect(save(registryManifest('rules:\n  negative-rules: off\n'), noProhibition).diagnostics.map((d) => d.ruleId)).not.toContain('negative-rules');
    const warned = save(registryManifest('rules:\n  negative-rules: warn\n'), noProhibition);
    expect(warned.ok).toBe(true);
    expect(warned.diagnostics.find((d) => d.ruleId === 'negative-rules')?.severity).toBe('warning');
    const markers = registryManifest('rules:\n  negative-rules: [error, {markers: [forbidden]}]\n');
    expect(save(markers, 'This is forbidden: sending without review.').diagnostics.map((d) => d.ruleId)).not.toContain('negative-rules');
    const body = 'Never send the report without showing it first, and never guess the period.';
    expect(save(registryManifest(), body).diagnostics.map((d) => d.ruleId)).not.toContain('token-budget');
    const budget = registryManifest('rules:\n  token-budget: [warn, {bodyWarn: 10}]\n');
    expect(save(budget, body).diagnostics.find((d) => d.ruleId === 'token-budget')).toMatchObject({ severity: 'warning' });
  });

  it('carries the settings of exactly the registry rules user capabilities run, deterministically', () => {
    const manifest = registryManifest('rules:\n  negative-rules: warn\n');
    const registryRuleIds = USER_CAPABILITY_RULES.map((rule) => rule.meta.id).filter((id) => !id.startsWith('user-'));
    expect(Object.keys(manifest.rules ?? {}).sort()).toEqual(registryRuleIds.sort());
    expect(manifest.rules?.['negative-rules']?.level).toBe('warn');
    expect(serializeManifest(registryManifest('rules:\n  negative-rules: warn\n'))).toBe(serializeManifest(manifest));
  });

  it('refuses a manifest that sets an unknown rule or options the rule refuses', () => {
    const manifest = registryManifest();
    for (const rules of [
      { ...manifest.rules, 'no-such-rule': { level: 'error', options: {} } },
      { ...manifest.rules, 'duplicate-content': { level: 'warn', options: { minLength: 'long' } } },
    ]) {
      const { integrity: _old, ...rest } = { ...manifest, rules } as Manifest;
      const tampered = { ...rest, integrity: manifestIntegrity(rest) };
      const parsed = parseManifest(serializeManifest(tampered));
      expect(parsed.ok).toBe(false);
      if (!parsed.ok) expect(parsed.error).toMatch(/manifest sets (rule "no-such-rule"|invalid options for rule "duplicate-content")/);
    }
  });
});
