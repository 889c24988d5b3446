// find_capabilities off the request path: CatalogSearch.prepare() analyzes every capability after
// activation in bounded slices; answers are the same whether it ran, ran partly or did not run.
import { describe, expect, it } from 'vitest';
import { catalogEntry, toolNames } from '../../compiler/contract.js';
import { Catalog } from '../../server/catalog.js';
import { Grants } from '../../server/permissions.js';
import { makeManifest } from './helpers.js';

const specs = Array.from({ length: 3000 }, (_, index) => ({
  id: `cap-${String(index).padStart(4, '0')}`,
  description: `Prepares the ${['weekly report', 'invoice', 'deploy plan', '周报'][index % 4]} number ${index}.`,
  requiredToolsets: index % 3 === 0 ? ['reports'] : [],
}));
const manifest = makeManifest(specs);
const names = toolNames('');
const requests = [
  { query: 'weekly report 12', limit: 10 },
  { query: '帮我写周报', limit: 5 },
  { query: 'invoce', limit: 10 },
];

function answers(catalog: Catalog, grants: Grants): unknown[] {
  const listing = catalog.visibleCapabilities(grants);
  return requests.map((request) => catalog.search.search({ catalogVersion: listing.catalogVersion, platform: listing, user: [] }, request));
}

/** Counts the turns of the event loop (one setImmediate after another) until stop(). */
function loopTurns(): { turns: () => number; stop: () => void } {
  let turns = 0;
  let done = false;
  const tick = (): void => {
    turns += 1;
    if (!done) setImmediate(tick);
  };
  setImmediate(tick);
  return { turns: () => turns, stop: () => (done = true) };
}

describe('CatalogSearch.prepare', () => {
  it('yields to other work between slices and changes no answer', async () => {
    const prepared = new Catalog(manifest, names);
    const loop = loopTurns();
    const started = performance.now();
    await prepared.search.prepare();
    loop.stop();
    const took = performance.now() - started;
    // 3,000 capabilities take well over one 10 ms slice: the loop must have run between slices.
    expect(took).toBeGreaterThan(20);
    expect(loop.turns()).toBeGreaterThan(1);

    for (const grants of [new Grants([]), new Grants(['reports:read'])]) {
      expect(answers(prepared, grants)).toEqual(answers(new Catalog(manifest, names), grants));
    }
  });

  it('a reload keeps the analysis of capabilities it did not change, and answers as a fresh start', async () => {
    const before = new Catalog(manifest, names);
    expect(await before.search.prepare()).toEqual({ kept: 0, analyzed: specs.length });
    // One capability's description changes: only it is analyzed again.
    const changed = specs.map((spec, index) => (index === 7 ? { ...spec, description: 'Plans the quarterly budget review.' } : spec));
    const next = makeManifest(changed);
    const reloaded = new Catalog(next, names);
    expect(await reloaded.search.prepare(before.search)).toEqual({ kept: specs.length - 1, analyzed: 1 });
    for (const grants of [new Grants([]), new Grants(['reports:read'])]) {
      expect(answers(reloaded, grants)).toEqual(answers(new Catalog(next, names), grants));
    }
    const budget = reloaded.visibleCapabilities(new Grants(['reports:read']));
    const found = reloaded.search.search({ catalogVersion: budget.catalogVersion, platform: budget, user: [] }, { query: 'quarterly budget', limit: 1 });
    expect(found[0]?.id).toBe('cap-0007');
    // Other toolsets (their tool descriptions are indexed): everything is analyzed again.
    const retooled = makeManifest(changed, { toolsets: { ...next.toolsets, extra: { description: 'Extra', tools: {} } } });
    expect(await new Catalog(retooled, names).search.prepare(reloaded.search)).toEqual({ kept: 0, analyzed: specs.length });
  });

  it('a search during prepare answers as without it', async () => {
    const catalog = new Catalog(manifest, names);
    const running = catalog.search.prepare();
    const during = answers(catalog, new Grants(['reports:read']));
    await running;
    expect(during).toEqual(answers(new Catalog(manifest, names), new Grants(['reports:read'])));
  });
});

describe('CatalogSearch.prepareView', () => {
  // An owner at the limits: 100 user capabilities of 50 triggers of 200 characters, words no one else uses.
  let seed = 7;
  const word = (): string => {
    seed = (seed * 48271) % 2147483647;
    return seed.toString(36).slice(0, 6);
  };
  const trigger = (): string => Array.from({ length: 28 }, word).join(' ').slice(0, 200);
  const user = Array.from({ length: 100 }, (_, index) =>
    catalogEntry(
      {
        id: `user:c${index}`,
        name: `Mine ${index}`,
        description: 'My own workflow.',
        whenToUse: Array.from({ length: 50 }, trigger),
        protocolVersion: `r${index}`,
      },
      'get_capability_protocol',
    ),
  );
  const query = { query: `${user[42]!.whenToUse[3]!.split(' ').slice(0, 3).join(' ')} weekly report`, limit: 10 };

  it("makes an owner's view in slices, other work running between them, and answers as the view made at once", async () => {
    const catalog = new Catalog(manifest, names);
    await catalog.search.prepare();
    const platform = catalog.visibleCapabilities(new Grants(['reports:read']));
    const scope = { catalogVersion: 'sha256:owner', platform, user };
    const loop = loopTurns();
    const started = performance.now();
    await Promise.all([catalog.search.prepareView(scope), catalog.search.prepareView(scope)]);
    loop.stop();
    // ~1 MB of triggers takes many 10 ms slices: the loop ran between them.
    expect(performance.now() - started).toBeGreaterThan(20);
    expect(loop.turns()).toBeGreaterThan(1);

    const answered = catalog.search.search(scope, query);
    expect(answered[0]?.id).toBe('user:c42');
    const atOnce = new Catalog(manifest, names);
    expect(answered).toEqual(atOnce.search.search(scope, query));
  }, 60_000);
});
