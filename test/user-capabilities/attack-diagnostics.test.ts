// A save's diagnostics from a hostile document: 60 KB of links to unknown capabilities gave 5,300
// diagnostics, about a megabyte of JSON, twice in the answer (text and structuredContent). The
// answer now lists at most 100, errors first, says how many more there were, and cuts long messages.
import { describe, expect, it } from 'vitest';
import { MAX_DIAGNOSTIC_MESSAGE, MAX_TOOL_DIAGNOSTICS } from '../../server/user-capabilities.js';
import { aliceOnFreshStore, ATTACK_BACKENDS } from './attack-backends.js';
import { WEEKLY_DIGEST } from './harness.js';

const [sqlite] = ATTACK_BACKENDS;

describe('bounded save diagnostics', () => {
  const start = aliceOnFreshStore(sqlite!.make);

  interface Diagnostic {
    ruleId: string;
    severity: string;
    message: string;
    line: number;
    column: number;
  }

  it('answers at most 100 diagnostics, errors first, with the count of the others', async () => {
    const { alice, store } = await start();
    const links = Array.from({ length: 2_000 }, (_, i) => `[a](capability:missing-${i})`).join('\n\n');
    const markdown = `${WEEKLY_DIGEST}\n${links}\n`;
    expect(Buffer.byteLength(markdown)).toBeLessThan(64 * 1024);
    const text = await alice.text('save_user_capability', { markdown });
    const answer = JSON.parse(text) as { success: boolean; diagnostics: Diagnostic[]; diagnosticsOmitted?: number };
    expect(answer.success).toBe(false);
    expect(answer.diagnostics).toHaveLength(MAX_TOOL_DIAGNOSTICS);
    expect(answer.diagnosticsOmitted).toBeGreaterThan(2_000);
    expect(answer.diagnostics.every((d) => d.severity === 'error')).toBe(true);
    // In document order, so an author reads them top to bottom.
    const positions = answer.diagnostics.map((d) => d.line * 1e6 + d.column);
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
    // About 750 characters a diagnostic; the whole list was 1.4 MB.
    expect(text.length).toBeLessThan(150_000);
    expect(await store.countByOwner('key:alice')).toBe(0);
  });

  it('lists errors before warnings when there are more than it can list', async () => {
    const { alice } = await start();
    // Warnings first in the document (tools of the linked toolset's family that do not exist), then errors.
    const warnings = Array.from({ length: 60 }, (_, i) => `Use \`submit_made_up_${i}\` here.`).join('\n\n');
    const errors = Array.from({ length: 150 }, (_, i) => `[broken](capability:no-such-${i})`).join('\n\n');
    const markdown = `${WEEKLY_DIGEST}\n${warnings}\n\n${errors}\n`;
    const answer = await alice.json('save_user_capability', { markdown });
    const diagnostics = answer.diagnostics as Diagnostic[];
    expect(answer.success).toBe(false);
    expect(diagnostics).toHaveLength(MAX_TOOL_DIAGNOSTICS);
    expect(answer.diagnosticsOmitted).toBeGreaterThan(50);
    expect(diagnostics.every((d) => d.severity === 'error')).toBe(true);
  });

  it('cuts a message that quotes a very long value', async () => {
    const { alice } = await start();
    const long = 'x'.repeat(20_000);
    const markdown = WEEKLY_DIGEST.replace('tools: [submit_report]', `tools: [${long}]`);
    const answer = await alice.json('save_user_capability', { markdown });
    const diagnostics = answer.diagnostics as Diagnostic[];
    expect(answer.success).toBe(false);
    expect(diagnostics.length).toBeGreaterThan(0);
    for (const d of diagnostics) expect([...d.message].length).toBeLessThanOrEqual(MAX_DIAGNOSTIC_MESSAGE);
    expect(diagnostics.some((d) => d.message.endsWith('…'))).toBe(true);
  });
});
