// User-defined capabilities through the MCP tools (SPEC §8), run against each store backend with a
// real database (sqlite.test.ts, postgres.test.ts): save, list, get, update, delete; every
// validation failure with its diagnostic; ownership; visibility decided on every call; concurrency;
// the per-owner limit; a database that is down.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ANONYMOUS, authenticatedCaller } from '../../server/identity.js';
import { STORE_UNAVAILABLE_MESSAGE } from '../../server/user-capabilities.js';
import type { UserCapabilityStore } from '../../server/user-store/store.js';
import { STANDARD_CAPABILITIES, structured } from '../server/helpers.js';
import {
  PRINCIPALS,
  UNIFORM_ERROR_TEXT,
  USER_SCOPE,
  WEEKLY_DIGEST,
  entries,
  startHarness,
  userEntries,
  type Harness,
  type Session,
  type UserStoreBackend,
} from './harness.js';

interface SaveAnswer {
  success: boolean;
  capabilityId?: string;
  revision?: string;
  diagnostics?: { ruleId: string; severity: string; message: string; line: number; column: number }[];
  error?: string;
  code?: string;
}

async function save(session: Session, args: Record<string, unknown>): Promise<{ answer: SaveAnswer; isError: boolean }> {
  const result = await session.call('save_user_capability', args);
  return { answer: structured(result) as unknown as SaveAnswer, isError: result.isError === true };
}

async function saved(session: Session, markdown: string): Promise<{ capabilityId: string; revision: string }> {
  const { answer, isError } = await save(session, { markdown });
  if (isError || !answer.capabilityId || !answer.revision) throw new Error(`save failed: ${JSON.stringify(answer)}`);
  return { capabilityId: answer.capabilityId, revision: answer.revision };
}

const WITHOUT_CALENDAR = PRINCIPALS.map((p) => (p.id === 'alice' ? { ...p, scopes: p.scopes.filter((s) => s !== 'calendar:read') } : p));

export function describeUserCapabilities(label: string, createBackend: () => Promise<UserStoreBackend>): void {
  describe(`user-defined capabilities over MCP: ${label}`, () => {
    let backend: UserStoreBackend;
    let harness: Harness;
    let store: UserCapabilityStore;
    let alice: Session;

    async function start(options: { maxPerOwner?: number; toolPrefix?: string } = {}): Promise<void> {
      harness = await startHarness(
        async () => {
          store = await backend.open(options.maxPerOwner !== undefined ? { maxPerOwner: options.maxPerOwner } : {});
          return store;
        },
        options.toolPrefix !== undefined ? { toolPrefix: options.toolPrefix } : {},
      );
      alice = await harness.session('key-alice');
    }

    beforeEach(async () => {
      backend = await createBackend();
    });

    afterEach(async () => {
      await harness?.close();
      await backend.dispose();
    });

    it('saves, lists, gets, updates and deletes, each answer as the contract says', async () => {
      await start();
      const platform = await alice.json('list_capabilities');
      expect(userEntries(platform)).toEqual([]);

      const { answer, isError } = await save(alice, { markdown: WEEKLY_DIGEST });
      expect(isError).toBe(false);
      expect(Object.keys(answer).sort()).toEqual(['capabilityId', 'revision', 'success']);
      expect(answer.success).toBe(true);
      expect(answer.capabilityId).toMatch(/^user:[a-z2-7]{16}$/);
      const id = answer.capabilityId!;

      const listed = await alice.json('list_capabilities');
      expect(listed['catalogVersion']).not.toBe(platform['catalogVersion']);
      // Platform entries first, unchanged; then the caller's own.
      expect(entries(listed).slice(0, -1)).toEqual(entries(platform));
      expect(userEntries(listed)).toEqual([
        {
          id,
          name: 'Weekly digest',
          description: 'Sends my weekly report with the calendar digest.',
          whenToUse: ['send my weekly digest'],
          protocolTool: 'get_capability_protocol',
          protocolInput: { capabilityId: id },
          protocolVersion: answer.revision,
          isUserDefined: true,
        },
      ]);

      const got = await alice.json('get_capability_protocol', { capabilityId: id });
      expect(got).toMatchObject({
        success: true,
        capabilityId: id,
        protocolVersion: answer.revision,
        revision: answer.revision,
        isUserDefined: true,
        dependencies: ['calendar-digest', 'work-reporting'],
        toolBindings: [{ step: 'report', capability: 'work-reporting', tools: ['submit_report'] }],
      });
      expect(got['updatedAt']).toMatch(/^\d{4}-\d\d-\d\dT/);
      expect(got['protocol']).toContain('call `get_capability_protocol` with `{"capabilityId": "work-reporting"}`');
      expect(got['protocol']).not.toContain('capability:work-reporting');

      const update = await save(alice, {
        markdown: WEEKLY_DIGEST.replace('name: Weekly digest', 'name: Friday digest'),
        capabilityId: id,
        expectedRevision: answer.revision,
      });
      expect(update.isError).toBe(false);
      expect(update.answer.capabilityId).toBe(id);
      expect(update.answer.revision).not.toBe(answer.revision);
      const relisted = await alice.json('list_capabilities');
      expect(userEntries(relisted).map((e) => [e.name, e.protocolVersion])).toEqual([['Friday digest', update.answer.revision]]);
      expect(relisted['catalogVersion']).not.toBe(listed['catalogVersion']);

      expect(await alice.json('delete_user_capability', { capabilityId: id })).toEqual({ success: true });
      const after = await alice.json('list_capabilities');
      expect(after).toEqual(platform);
      expect(await alice.text('get_capability_protocol', { capabilityId: id })).toBe(UNIFORM_ERROR_TEXT);
      expect(await alice.text('delete_user_capability', { capabilityId: id })).toBe(UNIFORM_ERROR_TEXT);
    });

    it('delivers only the capabilities the workflow links to when uses is wider', async () => {
      await start();
      const { capabilityId } = await saved(alice, WEEKLY_DIGEST);
      const record = await store.get(capabilityId);
      expect(record?.uses).toEqual(['work-reporting', 'calendar-digest', 'open-help']);
      expect(record?.dependencies).toEqual(['calendar-digest', 'work-reporting']);
      expect((await alice.json('get_capability_protocol', { capabilityId }))['dependencies']).toEqual(['calendar-digest', 'work-reporting']);
      // open-help is declared but not linked: removing it from the platform changes nothing.
      await harness.reloadManifest(STANDARD_CAPABILITIES.filter((c) => c.id !== 'open-help'));
      expect(userEntries(await alice.json('list_capabilities')).map((e) => e.id)).toEqual([capabilityId]);
    });

    describe('every validation failure comes back as its diagnostic, and nothing is stored', () => {
      const cases: { label: string; markdown: string; ruleId: string; line: number; column: number; message: RegExp }[] = [
        {
          label: 'an unknown frontmatter field',
          markdown: WEEKLY_DIGEST.replace('uses:', 'tags: [x]\nuses:'),
          ruleId: 'user-frontmatter',
          line: 6,
          column: 1,
          message: /unknown field "tags"/,
        },
        {
          label: 'a missing required field',
          markdown: WEEKLY_DIGEST.replace('description: Sends my weekly report with the calendar digest.\n', ''),
          ruleId: 'user-frontmatter',
          line: 2,
          column: 1,
          message: /description/,
        },
        {
          label: 'no frontmatter at all',
          markdown: '# Just a title\n\nNever guess.\n',
          ruleId: 'user-frontmatter',
          line: 1,
          column: 1,
          message: /frontmatter/,
        },
        {
          label: 'a link to a capability not in uses',
          markdown: WEEKLY_DIGEST.replace('uses: [work-reporting, calendar-digest, open-help]', 'uses: [work-reporting, open-help]'),
          ruleId: 'user-uses',
          line: 13,
          column: 9,
          message: /links to "calendar-digest", which is not listed in `uses`/,
        },
        {
          label: 'a uses entry the author cannot see (same message as a missing one)',
          markdown: WEEKLY_DIGEST.replace('open-help]', 'personal-automation]'),
          ruleId: 'user-uses',
          line: 6,
          column: 41,
          message: /^`uses` lists "personal-automation", which is not a capability you can use$/,
        },
        {
          label: 'a uses entry that does not exist',
          markdown: WEEKLY_DIGEST.replace('open-help]', 'no-such-thing]'),
          ruleId: 'user-uses',
          line: 6,
          column: 41,
          message: /^`uses` lists "no-such-thing", which is not a capability you can use$/,
        },
        {
          label: 'a bound tool outside the toolsets of the linked capability',
          markdown: WEEKLY_DIGEST.replace('tools: [submit_report]', 'tools: [list_events]'),
          ruleId: 'user-tool-bindings',
          line: 10,
          column: 13,
          message: /tool "list_events" of step "report" is not in the toolsets of "work-reporting"/,
        },
        {
          label: 'a binding to a capability the workflow does not link to',
          markdown: WEEKLY_DIGEST.replace('2. Load [reporting](capability:work-reporting) and submit the report.', '2. Submit the report.'),
          ruleId: 'user-tool-bindings',
          line: 9,
          column: 17,
          message: /has no \[work-reporting\]\(capability:work-reporting\) link/,
        },
        {
          label: 'a workflow without any prohibition',
          markdown: WEEKLY_DIGEST.replace('Never submit a report without showing it to me first.', 'Show it to me first.'),
          ruleId: 'negative-rules',
          line: 13,
          column: 1,
          message: /prohibition/,
        },
        {
          label: 'a duplicate trigger',
          markdown: WEEKLY_DIGEST.replace('  - send my weekly digest\n', '  - send my weekly digest\n  - send my weekly digest\n'),
          ruleId: 'when-to-use',
          line: 6,
          column: 5,
          message: /send my weekly digest/,
        },
        {
          label: 'Markdown over the size limit',
          markdown: `${WEEKLY_DIGEST}\n${'All work and no play. '.repeat(4000)}\n`,
          ruleId: 'user-frontmatter',
          line: 1,
          column: 1,
          message: /over the 65536-byte limit/,
        },
      ];

      for (const testCase of cases) {
        it(testCase.label, async () => {
          await start();
          const { answer, isError } = await save(alice, { markdown: testCase.markdown });
          expect(isError).toBe(true);
          expect(answer.success).toBe(false);
          expect(Object.keys(answer).sort()).toEqual(['diagnostics', 'success']);
          const found = answer.diagnostics!.filter((d) => d.ruleId === testCase.ruleId && d.severity === 'error');
          expect(found, JSON.stringify(answer.diagnostics)).toHaveLength(1);
          expect(Object.keys(found[0]!).sort()).toEqual(['column', 'line', 'message', 'ruleId', 'severity']);
          expect(found[0]).toMatchObject({ line: testCase.line, column: testCase.column });
          expect(found[0]!.message).toMatch(testCase.message);
          expect(await store.countByOwner('key:alice')).toBe(0);
        });
      }

      it('an invalid update leaves the stored version as it was', async () => {
        await start();
        const first = await saved(alice, WEEKLY_DIGEST);
        const { isError, answer } = await save(alice, { markdown: WEEKLY_DIGEST.replace('uses:', 'tags: [x]\nuses:'), capabilityId: first.capabilityId });
        expect(isError).toBe(true);
        expect(answer.diagnostics?.[0]?.ruleId).toBe('user-frontmatter');
        expect((await store.get(first.capabilityId))?.revision).toBe(first.revision);
      });
    });

    it('lets no other principal see, get, update or delete it: the uniform error, byte for byte', async () => {
      await start();
      const { capabilityId, revision } = await saved(alice, WEEKLY_DIGEST);
      const bob = await harness.session('key-bob');
      const carol = await harness.session('key-carol');
      const anonymous = await harness.session();
      const unknown = 'user:aaaaaaaaaaaaaaaa';

      for (const other of [bob, carol, anonymous]) {
        expect(userEntries(await other.json('list_capabilities'))).toEqual([]);
        expect(await other.text('get_capability_protocol', { capabilityId })).toBe(UNIFORM_ERROR_TEXT);
        expect(await other.text('get_capability_protocol', { capabilityId: unknown })).toBe(UNIFORM_ERROR_TEXT);
      }
      expect(await alice.text('get_capability_protocol', { capabilityId: unknown })).toBe(UNIFORM_ERROR_TEXT);
      const results = [
        await bob.call('save_user_capability', { markdown: WEEKLY_DIGEST, capabilityId }),
        await bob.call('save_user_capability', { markdown: WEEKLY_DIGEST, capabilityId, expectedRevision: revision }),
        await bob.call('save_user_capability', { markdown: 'not even frontmatter', capabilityId }),
        await bob.call('save_user_capability', { markdown: WEEKLY_DIGEST, capabilityId: unknown }),
        await bob.call('save_user_capability', { markdown: WEEKLY_DIGEST, capabilityId: 'work-reporting' }),
        await bob.call('delete_user_capability', { capabilityId }),
        await bob.call('delete_user_capability', { capabilityId: unknown }),
        await bob.call('delete_user_capability', { capabilityId: 'work-reporting' }),
      ];
      for (const result of results) {
        expect(result.isError).toBe(true);
        expect(result.content).toEqual([{ type: 'text', text: UNIFORM_ERROR_TEXT }]);
      }
      expect((await store.get(capabilityId))?.revision).toBe(revision);
      expect(userEntries(await alice.json('list_capabilities')).map((e) => e.id)).toEqual([capabilityId]);
    });

    it('answers an id or a revision this server never gave out without asking the store, which stays healthy', async () => {
      await start();
      const { capabilityId, revision } = await saved(alice, WEEKLY_DIGEST);
      // PostgreSQL refuses NUL in text: sent to it, these failed as a store outage and marked saves failing.
      const foreign = ['user:\u0000', `${capabilityId}\u0000`, capabilityId.toUpperCase(), `${capabilityId}/../x`, `user:${'a'.repeat(4_000)}`, 'user:'];
      for (const id of foreign) {
        expect(await alice.text('get_capability_protocol', { capabilityId: id })).toBe(UNIFORM_ERROR_TEXT);
        expect(await alice.text('save_user_capability', { markdown: WEEKLY_DIGEST, capabilityId: id })).toBe(UNIFORM_ERROR_TEXT);
        expect(await alice.text('delete_user_capability', { capabilityId: id })).toBe(UNIFORM_ERROR_TEXT);
      }
      const stale = await alice.call('save_user_capability', { markdown: WEEKLY_DIGEST, capabilityId, expectedRevision: `${revision}\u0000` });
      expect(structured(stale)).toMatchObject({ success: false, code: 'stale-revision' });
      expect(store.health()).toEqual({ status: 'ok' });
      expect((await store.get(capabilityId))?.revision).toBe(revision);
      expect(await alice.json('get_capability_protocol', { capabilityId })).toMatchObject({ success: true, revision });
    });

    it('hides it when a dependency leaves the manifest, and shows it again when it is back', async () => {
      await start();
      const { capabilityId } = await saved(alice, WEEKLY_DIGEST);
      const before = await alice.json('list_capabilities');
      await harness.reloadManifest(STANDARD_CAPABILITIES.filter((c) => c.id !== 'calendar-digest'));
      const hidden = await alice.json('list_capabilities');
      expect(userEntries(hidden)).toEqual([]);
      expect(hidden['catalogVersion']).not.toBe(before['catalogVersion']);
      expect(await alice.text('get_capability_protocol', { capabilityId })).toBe(UNIFORM_ERROR_TEXT);
      // Hidden, not gone: no clean-up step ran.
      expect(await store.get(capabilityId)).toBeDefined();

      await harness.reloadManifest(STANDARD_CAPABILITIES);
      const back = await alice.json('list_capabilities');
      expect(userEntries(back).map((e) => e.id)).toEqual([capabilityId]);
      expect(back['catalogVersion']).toBe(before['catalogVersion']);
      expect((await alice.json('get_capability_protocol', { capabilityId }))['success']).toBe(true);
    });

    it('hides it when the owner loses a scope a dependency needs, or the user-capabilities scope, and shows it again', async () => {
      await start();
      const { capabilityId } = await saved(alice, WEEKLY_DIGEST);
      await harness.reloadPrincipals(WITHOUT_CALENDAR);
      expect(userEntries(await alice.json('list_capabilities'))).toEqual([]);
      expect(await alice.text('get_capability_protocol', { capabilityId })).toBe(UNIFORM_ERROR_TEXT);

      await harness.reloadPrincipals(PRINCIPALS);
      expect(userEntries(await alice.json('list_capabilities')).map((e) => e.id)).toEqual([capabilityId]);

      const withoutUserScope = PRINCIPALS.map((p) => (p.id === 'alice' ? { ...p, scopes: p.scopes.filter((s) => s !== USER_SCOPE) } : p));
      await harness.reloadPrincipals(withoutUserScope);
      expect(userEntries(await alice.json('list_capabilities'))).toEqual([]);
      expect(await alice.text('get_capability_protocol', { capabilityId })).toBe(UNIFORM_ERROR_TEXT);
      // The session registered the tools while she held the scope; each call checks it again.
      for (const result of [
        await alice.call('save_user_capability', { markdown: WEEKLY_DIGEST }),
        await alice.call('delete_user_capability', { capabilityId }),
      ]) {
        expect(result.isError).toBe(true);
        expect(structured(result)).toEqual({
          success: false,
          error: 'saving or deleting user capabilities needs the scope user-capabilities:write',
          code: 'forbidden',
        });
      }
      expect(await store.countByOwner('key:alice')).toBe(1);

      // user-capabilities:read is enough to see one's own, not to change them.
      const readOnly = PRINCIPALS.map((p) =>
        p.id === 'alice' ? { ...p, scopes: [...p.scopes.filter((s) => s !== USER_SCOPE), 'user-capabilities:read'] } : p,
      );
      await harness.reloadPrincipals(readOnly);
      expect(userEntries(await alice.json('list_capabilities')).map((e) => e.id)).toEqual([capabilityId]);
      expect(structured(await alice.call('delete_user_capability', { capabilityId }))['code']).toBe('forbidden');
    });

    it('does not offer the tools to a caller without user-capabilities:write, nor run them', async () => {
      await start();
      const toolNames = async (session: Session) => (await session.client.listTools()).tools.map((t) => t.name).sort();
      expect(await toolNames(alice)).toEqual([
        'delete_user_capability',
        'find_capabilities',
        'get_capability_protocol',
        'get_current_user',
        'list_capabilities',
        'save_user_capability',
      ]);
      const carol = await harness.session('key-carol');
      const anonymous = await harness.session();
      for (const session of [carol, anonymous]) {
        expect(await toolNames(session)).toEqual(['find_capabilities', 'get_capability_protocol', 'get_current_user', 'list_capabilities']);
        const result = await session.call('save_user_capability', { markdown: WEEKLY_DIGEST });
        expect(result.isError).toBe(true);
        expect(JSON.stringify(result.content)).toMatch(/not found/i);
      }
      expect(await store.countByOwner('key:carol')).toBe(0);
      // The service fails closed on its own, whatever registered the tool.
      const service = harness.runtime.userCapabilities!;
      const catalog = harness.runtime.catalog();
      const readOnlyCaller = authenticatedCaller('carol', 'carol', ['reports:read', 'user-capabilities:read'], 'jwt', 'https://idp.test');
      expect(await service.save(readOnlyCaller, catalog, { markdown: WEEKLY_DIGEST }, () => readOnlyCaller)).toMatchObject({
        kind: 'failed',
        code: 'forbidden',
      });
      expect(await service.save(ANONYMOUS, catalog, { markdown: WEEKLY_DIGEST }, () => ANONYMOUS)).toMatchObject({ kind: 'failed', code: 'forbidden' });
      expect(await service.delete(ANONYMOUS, 'user:aaaaaaaaaaaaaaaa')).toMatchObject({ kind: 'failed', code: 'forbidden' });
    });

    it('follows --tool-prefix', async () => {
      await start({ toolPrefix: 'yi_' });
      const names = (await alice.client.listTools()).tools.map((t) => t.name).sort();
      expect(names).toEqual([
        'yi_delete_user_capability',
        'yi_find_capabilities',
        'yi_get_capability_protocol',
        'yi_get_current_user',
        'yi_list_capabilities',
        'yi_save_user_capability',
      ]);
      const answer = structured(await alice.call('yi_save_user_capability', { markdown: WEEKLY_DIGEST }));
      const entry = userEntries(await alice.json('yi_list_capabilities'))[0]!;
      expect(entry.protocolTool).toBe('yi_get_capability_protocol');
      const got = await alice.json('yi_get_capability_protocol', { capabilityId: answer['capabilityId'] });
      expect(got['protocol']).toContain('call `yi_get_capability_protocol` with `{"capabilityId": "work-reporting"}`');
    });

    it('serves a saved revision as the worker rendered it at save, and a replica that renders it at load serves the same bytes', async () => {
      await start({ toolPrefix: 'yi_' });
      // 60 KB of blank lines: seconds of parsing, which the first load of the revision no longer does on the event loop.
      const markdown = WEEKLY_DIGEST.replace(/\n*$/, '\n') + '\n'.repeat(60 * 1024);
      const answer = structured(await alice.call('yi_save_user_capability', { markdown }));
      const capabilityId = answer['capabilityId'] as string;
      const began = performance.now();
      const here = await alice.json('yi_get_capability_protocol', { capabilityId });
      const loadMs = performance.now() - began;
      expect(here['protocol']).toContain('call `yi_get_capability_protocol` with `{"capabilityId": "work-reporting"}`');
      // A replica on the same database, which did not see the save, renders the revision itself.
      const replica = await startHarness(() => backend.open(), { toolPrefix: 'yi_' });
      try {
        const parseBegan = performance.now();
        const there = await (await replica.session('key-alice')).json('yi_get_capability_protocol', { capabilityId });
        const parseMs = performance.now() - parseBegan;
        expect(there).toEqual(here);
        // The load that parses takes seconds; the one served from the save's rendering a fraction of it.
        expect(loadMs).toBeLessThan(parseMs / 4);
      } finally {
        await replica.close();
      }
    }, 60_000);

    it('lets exactly one of several concurrent updates with the same expectedRevision win', async () => {
      await start();
      const { capabilityId, revision } = await saved(alice, WEEKLY_DIGEST);
      const others = await Promise.all(Array.from({ length: 5 }, () => harness.session('key-alice')));
      const results = await Promise.all(
        [alice, ...others].map((session, i) =>
          save(session, { markdown: WEEKLY_DIGEST.replace('name: Weekly digest', `name: Digest ${i}`), capabilityId, expectedRevision: revision }),
        ),
      );
      const winners = results.filter((r) => !r.isError);
      const losers = results.filter((r) => r.isError);
      expect(winners).toHaveLength(1);
      expect(losers).toHaveLength(5);
      for (const loser of losers) {
        expect(loser.answer).toMatchObject({ success: false, code: 'stale-revision' });
        expect(loser.answer.error).toContain(`was changed since revision ${revision}`);
      }
      expect((await store.get(capabilityId))?.revision).toBe(winners[0]!.answer.revision);
      // Without expectedRevision the last write wins.
      expect((await save(alice, { markdown: WEEKLY_DIGEST, capabilityId })).isError).toBe(false);
    });

    it('refuses expectedRevision without capabilityId', async () => {
      await start();
      const { answer, isError } = await save(alice, { markdown: WEEKLY_DIGEST, expectedRevision: 'abc' });
      expect(isError).toBe(true);
      expect(answer).toMatchObject({ success: false, code: 'invalid-arguments' });
      expect(await store.countByOwner('key:alice')).toBe(0);
    });

    it('refuses a save over the per-owner limit with a clear error; updates still work', async () => {
      await start({ maxPerOwner: 2 });
      const first = await saved(alice, WEEKLY_DIGEST);
      await saved(alice, WEEKLY_DIGEST);
      const { answer, isError } = await save(alice, { markdown: WEEKLY_DIGEST });
      expect(isError).toBe(true);
      expect(answer).toEqual({
        success: false,
        error: 'an owner may keep at most 2 user capabilities: delete one before creating another',
        code: 'limit-exceeded',
      });
      expect(await store.countByOwner('key:alice')).toBe(2);
      // At the limit, a create is refused before its Markdown is compiled: no diagnostics, the limit.
      expect((await save(alice, { markdown: 'not a capability' })).answer).toMatchObject({ success: false, code: 'limit-exceeded' });
      expect((await save(alice, { markdown: WEEKLY_DIGEST, capabilityId: first.capabilityId })).isError).toBe(false);
      await saved(await harness.session('key-bob'), WEEKLY_DIGEST);
    });

    it('shows a save made through another replica on the next call', async () => {
      await start();
      const replica = await startHarness(() => backend.open());
      try {
        const aliceThere = await replica.session('key-alice');
        const { capabilityId, revision } = await saved(aliceThere, WEEKLY_DIGEST);
        expect(userEntries(await alice.json('list_capabilities')).map((e) => [e.id, e.protocolVersion])).toEqual([[capabilityId, revision]]);
        const updated = await saved(alice, WEEKLY_DIGEST.replace('name: Weekly digest', 'name: Replica digest'));
        expect(
          userEntries(await aliceThere.json('list_capabilities'))
            .map((e) => e.name)
            .sort(),
        ).toEqual(['Replica digest', 'Weekly digest']);
        expect((await aliceThere.json('get_capability_protocol', { capabilityId: updated.capabilityId }))['revision']).toBe(updated.revision);
      } finally {
        await replica.close();
      }
    });

    it('answers a clear error when the database is down, while the platform catalog keeps serving', async () => {
      const lines: string[] = [];
      const log = (line: string): void => void lines.push(line);
      harness = await startHarness(() => backend.openUnreachable(log), { log });
      alice = await harness.session('key-alice');
      const carol = await harness.session('key-carol');

      const listing = await alice.json('list_capabilities');
      expect(listing['warning']).toBe(STORE_UNAVAILABLE_MESSAGE);
      expect(entries(listing).map((e) => e.id)).toEqual(entries(await carol.json('list_capabilities')).map((e) => e.id));
      expect(entries(listing).length).toBeGreaterThan(0);
      expect(await carol.json('list_capabilities')).not.toHaveProperty('warning');
      expect(await alice.json('get_capability_protocol', { capabilityId: 'work-reporting' })).toMatchObject({ success: true, capabilityId: 'work-reporting' });

      const failures = [
        await alice.call('save_user_capability', { markdown: WEEKLY_DIGEST }),
        await alice.call('delete_user_capability', { capabilityId: 'user:aaaaaaaaaaaaaaaa' }),
        await alice.call('get_capability_protocol', { capabilityId: 'user:aaaaaaaaaaaaaaaa' }),
      ];
      for (const result of failures) {
        expect(result.isError).toBe(true);
        expect(structured(result)).toEqual({ success: false, error: STORE_UNAVAILABLE_MESSAGE, code: 'store-unavailable' });
      }
      // The detail goes to the server log, once per outage, without a password.
      expect(lines.filter((l) => l.includes('the platform catalog keeps serving'))).toHaveLength(1);
      expect(lines.join('\n')).not.toContain('s3cret');
      // A caller who may not read user capabilities never reaches the store.
      expect(await carol.text('get_capability_protocol', { capabilityId: 'user:aaaaaaaaaaaaaaaa' })).toBe(UNIFORM_ERROR_TEXT);
    });
  });
}
