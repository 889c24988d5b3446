// The first skills/list of a caller class after a manifest load renders every skill it lists; at
// 10,000 capabilities that held the event loop for most of a second, and every other caller with it.
// It renders in slices now, serving other requests between them, and concurrent first calls share it.
import { describe, expect, it } from 'vitest';
import { toolNames } from '../../compiler/contract.js';
import { Catalog } from '../../server/catalog.js';
import { ANONYMOUS } from '../../server/identity.js';
import { Skills } from '../../server/skills/skills.js';
import { makeManifest } from './helpers.js';

/** RENDER_SLICE_MS in server/skills/skills.ts. */
const RENDER_SLICE_MS = 10;
const STEPS = Array.from({ length: 40 }, (_, step) => `${step + 1}. Check the record of step ${step + 1} before going on; never skip it.`).join('\n');

describe('skills/list rendering', () => {
  it('yields to other requests while it renders a large listing, and renders it once for concurrent calls', async () => {
    const specs = Array.from({ length: 5_000 }, (_, n) => ({
      id: `capability-${String(n).padStart(5, '0')}`,
      protocol: `---\nprotocol_version: 1.0.0\nprotocol_updated: 2025-01-01\n---\n# Capability ${n}\n\n${STEPS}\n`,
    }));
    const catalog = new Catalog(makeManifest(specs), toolNames(''));
    const skills = new Skills(toolNames(''));

    // Another request's work: how often the event loop turned while the listing was made.
    let turns = 0;
    let ticking = true;
    const tick = (): void => {
      turns += 1;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const started = performance.now();
    const [first, second] = await Promise.all([skills.list(ANONYMOUS, catalog, undefined), skills.list(ANONYMOUS, catalog, undefined)]);
    const took = performance.now() - started;
    ticking = false;

    expect(first).toHaveLength(5_000);
    expect(second).toBe(first);
    // Rendering takes several slices; the loop turned between them (rendered in one go, it turned
    // not once before the listing was done). A pause of the machine makes fewer turns, not none.
    expect(took).toBeGreaterThan(4 * RENDER_SLICE_MS);
    expect(turns).toBeGreaterThanOrEqual(3);
  });
});
