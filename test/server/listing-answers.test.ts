// The list_capabilities answers (server/listing-answers.ts): the text is exactly the structured value
// as JSON for every shape of listing, answers are shared per caller class, and the owner-answer
// cache stays within its character bound, least recently used first out.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Catalog, type CatalogListing } from '../../server/catalog.js';
import { ListingAnswers } from '../../server/listing-answers.js';
import { Grants } from '../../server/permissions.js';
import type { CallerListing, UserCatalogEntry } from '../../server/user-capabilities.js';
import { STANDARD_CAPABILITIES, makeManifest } from './helpers.js';
import { runs } from '../support/property.js';

// Spelled out rather than imported: the tool-name helper is moving between modules.
const names: ConstructorParameters<typeof Catalog>[1] = {
  listCapabilities: 'list_capabilities',
  getCapabilityProtocol: 'get_capability_protocol',
  getCurrentUser: 'get_current_user',
  saveUserCapability: 'save_user_capability',
  deleteUserCapability: 'delete_user_capability',
  findCapabilities: 'find_capabilities',
};
const catalog = new Catalog(makeManifest(STANDARD_CAPABILITIES), names);
const everything = catalog.visibleCapabilities(new Grants(['reports:admin', 'automation:admin', 'calendar:admin']));
const nothing: CatalogListing = { catalogVersion: 'sha256:empty', capabilities: [] };

function userEntry(id: string, text = id): UserCatalogEntry {
  return {
    id,
    name: text,
    description: text,
    whenToUse: [text],
    protocolTool: 'get_capability_protocol',
    protocolInput: { capabilityId: id },
    protocolVersion: 'r1',
    isUserDefined: true,
  };
}

function ownerListing(version: string, user: UserCatalogEntry[], platform: CatalogListing = everything): CallerListing {
  return { platform, user, catalogVersion: version };
}

describe('listing answers', () => {
  it('gives every caller of a class the same answer, built once', () => {
    const answers = new ListingAnswers();
    const first = answers.platform(catalog.visibleCapabilities(new Grants(['reports:read'])));
    expect(answers.platform(catalog.visibleCapabilities(new Grants(['reports:write', 'elsewhere:read'])))).toBe(first);
    expect(first.text).toBe(JSON.stringify(first.structured));
    expect(answers.caller({ platform: everything, user: [], catalogVersion: everything.catalogVersion })).toBe(answers.platform(everything));
  });

  it('writes exactly JSON.stringify of the structured answer for any platform listing, user entries and warning', () => {
    const text = fc.string({ unit: 'grapheme', maxLength: 12 });
    fc.assert(
      fc.property(
        fc.boolean(),
        fc.array(fc.tuple(fc.stringMatching(/^user:[a-z0-9-]{1,8}$/), text), { maxLength: 4 }),
        fc.option(text, { nil: undefined }),
        text,
        (withPlatform, rows, warning, version) => {
          const platform = withPlatform ? everything : nothing;
          const user = warning === undefined ? rows.map(([id, words]) => userEntry(id, words)) : [];
          const listing: CallerListing = { ...ownerListing(version, user, platform), ...(warning !== undefined ? { unavailable: warning } : {}) };
          const answer = new ListingAnswers().caller(listing);
          expect(answer.text).toBe(JSON.stringify(answer.structured));
          expect(JSON.parse(answer.text)).toEqual(answer.structured);
        },
      ),
      { numRuns: runs(300) },
    );
  });

  it('reuses an owner answer by catalogVersion and builds an outage answer every time', () => {
    const answers = new ListingAnswers();
    const listing = ownerListing('sha256:owner', [userEntry('user:a')]);
    const first = answers.caller(listing);
    expect(answers.caller({ ...listing, user: [userEntry('user:a')] })).toBe(first);
    const outage: CallerListing = { platform: everything, user: [], catalogVersion: everything.catalogVersion, unavailable: 'store down' };
    expect(answers.caller(outage)).not.toBe(answers.caller(outage));
    expect(answers.caller(outage).structured.warning).toBe('store down');
    expect(answers.ownerCacheUsage.entries).toBe(1);
  });

  it('keeps owner answers within the character bound, least recently used out first', () => {
    const one = new ListingAnswers().caller(ownerListing('sha256:v000', [userEntry('user:a')])).text.length;
    const maxChars = one * 5;
    const answers = new ListingAnswers({ maxChars, maxAnswerChars: one * 2 });
    const keep = answers.caller(ownerListing('sha256:v000', [userEntry('user:a')]));
    for (let i = 1; i < 40; i += 1) {
      answers.caller(ownerListing(`sha256:v${String(i).padStart(3, '0')}`, [userEntry('user:a')]));
      // Read the first answer again each time: the most recently used one is never evicted.
      expect(answers.caller(ownerListing('sha256:v000', [userEntry('user:a')]))).toBe(keep);
      expect(answers.ownerCacheUsage.chars).toBeLessThanOrEqual(maxChars);
    }
    expect(answers.ownerCacheUsage.entries).toBe(5);
    const evicted = ownerListing('sha256:v001', [userEntry('user:a')]);
    expect(answers.caller(evicted).text).toBe(JSON.stringify(answers.caller(evicted).structured));

    // An answer over the per-answer bound is served but not kept.
    const big = ownerListing('sha256:big', [userEntry('user:b', 'x'.repeat(one * 3))]);
    const usage = answers.ownerCacheUsage;
    expect(JSON.parse(answers.caller(big).text)).toEqual(answers.caller(big).structured);
    expect(answers.caller(big)).not.toBe(answers.caller(big));
    expect(answers.ownerCacheUsage).toEqual(usage);
  });

  it('belongs to its catalog: a reloaded manifest starts with no owner answers', () => {
    catalog.answers.caller(ownerListing('sha256:reload', [userEntry('user:a')]));
    expect(catalog.answers.ownerCacheUsage.entries).toBeGreaterThan(0);
    expect(new Catalog(makeManifest(STANDARD_CAPABILITIES), names).answers.ownerCacheUsage.entries).toBe(0);
  });
});
