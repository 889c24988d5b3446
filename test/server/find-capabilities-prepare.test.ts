// find_capabilities off the request path: CatalogSearch.prepare() analyzes every capability after
// activation in bounded slices; answers are the same whether it ran, ran partly or did not run.
import { describe, expect, it } from 'vitest';
import { toolNames } from '../../compiler/contract.js';
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

describe('CatalogSearch.prepare', () => {
  it('yields to other work between slices and changes no answer', async () => {
    const prepared = new Catalog(manifest, names);
    let turns = 0;
    let done = false;
    const tick = (): void => {
      turns += 1;
      if (!done) setImmediate(tick);
    };
    setImmediate(tick);
    const started = performance.now();
    await prepared.search.prepare();
    done = true;
    const took = performance.now() - started;
    // 3,000 capabilities take well over one 10 ms slice: the loop must have run between slices.
    expect(took).toBeGreaterThan(20);
    expect(turns).toBeGreaterThan(1);

    for (const grants of [new Grants([]), new Grants(['reports:read'])]) {
      expect(answers(prepared, grants)).toEqual(answers(new Catalog(manifest, names), grants));
    }
  });

  it('a search during prepare answers as without it', async () => {
    const catalog = new Catalog(manifest, names);
    const running = catalog.search.prepare();
    const during = answers(catalog, new Grants(['reports:read']));
    await running;
    expect(during).toEqual(answers(new Catalog(manifest, names), new Grants(['reports:read'])));
  });
});
