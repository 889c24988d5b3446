// Saves are compiled off the event loop (server/user-compile-pool.ts): over real HTTP, a save whose
// compile spins (a test-only rule loaded through the pool's documented `testRulesModule` hook, in
// the real compiled worker from lib/) must not delay /healthz or list_capabilities, answers the
// budget diagnostic, and a full queue answers `busy`, as does an owner past their share of it. The
// worker is replaced after a timeout.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { startRuntime, type Runtime } from '../../server/runtime.js';
import { skillUri } from '../../server/skills/skills.js';
import { startHttpServer, type HttpOptions, type HttpServerHandle } from '../../server/transports/http.js';
import type { UserCompilePoolOptions } from '../../server/user-compile-pool.js';
import { COMPILE_UNAVAILABLE_MESSAGE } from '../../server/user-capabilities.js';
import { openUserStore } from '../../server/user-store/open.js';
import { STANDARD_CAPABILITIES, httpClient, makeManifest, principalsYaml, structured, tempDir, writeAtomic, writeManifest } from '../server/helpers.js';
import { PRINCIPALS, UNIFORM_ERROR_TEXT, WEEKLY_DIGEST, clientSession, userEntries, type Session } from './harness.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** The real worker, compiled by the test global setup. */
const WORKER = pathToFileURL(path.join(ROOT, 'lib/server/user-compile-worker.js'));
const SLOW_RULE = pathToFileURL(path.join(ROOT, 'test/user-capabilities/fixtures/slow-rule.mjs'));
const SLOW = WEEKLY_DIGEST.replace('Never submit', 'SPIN-FOREVER. Never submit');
const BUDGET_MS = 1_500;

let dir: string | undefined;
let runtime: Runtime | undefined;
let http: HttpServerHandle | undefined;
const sessions: Session[] = [];
/** Replicas started by a test, on the same database as the first server. */
const replicas: { runtime: Runtime; http: HttpServerHandle }[] = [];

afterEach(async () => {
  for (const session of sessions.splice(0)) await session.close().catch(() => undefined);
  for (const replica of replicas.splice(0)) {
    await replica.http.close();
    await replica.runtime.close();
  }
  await http?.close();
  await runtime?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
  dir = runtime = http = undefined;
});

/** What a test may add to the server: a log to read, HTTP options. */
interface Extra {
  log?: (line: string) => void;
  http?: HttpOptions;
}

async function serve(root: string, pool: UserCompilePoolOptions, extra: Extra = {}): Promise<{ runtime: Runtime; http: HttpServerHandle }> {
  const served = await startRuntime({
    ...(extra.log ? { log: extra.log } : {}),
    manifestFile: path.join(root, 'manifest.json'),
    principalsFile: path.join(root, 'principals.yaml'),
    watch: false,
    openUserStore: () => openUserStore('sqlite:user-capabilities.db', { root }),
    userCompile: { workerUrl: WORKER, testRulesModule: SLOW_RULE, budgetMs: BUDGET_MS, ...pool },
  });
  return { runtime: served, http: await startHttpServer(served, { port: 0, ...extra.http }) };
}

async function start(pool: UserCompilePoolOptions, extra: Extra = {}): Promise<void> {
  dir = tempDir('capreg-compile-pool-');
  writeManifest(path.join(dir, 'manifest.json'), makeManifest(STANDARD_CAPABILITIES));
  writeAtomic(path.join(dir, 'principals.yaml'), principalsYaml(PRINCIPALS));
  ({ runtime, http } = await serve(dir, pool, extra));
}

/** Another server on the first one's database: it did not see the saves made through the first. */
async function replica(pool: UserCompilePoolOptions): Promise<string> {
  const started = await serve(dir!, pool);
  replicas.push(started);
  return started.http.url;
}

async function as(token: string, url: string = http!.url): Promise<Session> {
  const client = await httpClient(url, token);
  const session = clientSession(client, () => client.close());
  sessions.push(session);
  return session;
}

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await work();
  return { value, ms: performance.now() - started };
}

const healthz = (url: string = http!.url): Promise<Response> => fetch(new URL('/healthz', url));

describe('saving a user capability compiles off the event loop', () => {
  it('keeps /healthz and list_capabilities answering while a save spins, and answers the budget diagnostic', { timeout: 30_000 }, async () => {
    expect(fs.existsSync(WORKER), 'lib/ is compiled by the test global setup').toBe(true);
    await start({});
    const alice = await as('key-alice');
    const bob = await as('key-bob');
    // A save first, so the worker is loaded and the slow save starts compiling at once.
    expect((await alice.json('save_user_capability', { markdown: WEEKLY_DIGEST }))['success']).toBe(true);

    const slow = timed(() => alice.call('save_user_capability', { markdown: SLOW }));
    await new Promise((resolve) => setTimeout(resolve, 200));
    const health = await timed(healthz);
    expect(health.value.status).toBe(200);
    const listing = await timed(() => bob.json('list_capabilities'));
    expect((listing.value['capabilities'] as unknown[]).length).toBeGreaterThan(0);
    // Inline, either would wait for the whole compile (60 s of spinning); 5 s leaves room for a busy machine.
    expect(health.ms).toBeLessThan(5_000);
    expect(listing.ms).toBeLessThan(5_000);

    const { value: result, ms } = await slow;
    expect(result.isError).toBe(true);
    const answer = structured(result) as { success: boolean; diagnostics: { message: string; line: number; column: number; severity: string }[] };
    expect(answer.success).toBe(false);
    expect(answer.diagnostics).toEqual([
      expect.objectContaining({
        severity: 'error',
        line: 1,
        column: 1,
        message: expect.stringContaining(`within the server's budget (${BUDGET_MS} ms)`) as unknown,
      }),
    ]);
    expect(ms).toBeGreaterThanOrEqual(BUDGET_MS - 50);
    expect(ms).toBeLessThan(BUDGET_MS + 5_000);

    // The terminated worker is replaced: the next save compiles and is stored.
    expect((await alice.json('save_user_capability', { markdown: WEEKLY_DIGEST }))['success']).toBe(true);
  });

  it('answers busy past the queue, and serves the queued save once the worker is free', { timeout: 30_000 }, async () => {
    await start({ workers: 1, queue: 1 });
    const alice = await as('key-alice');
    const bob = await as('key-bob');
    expect((await alice.json('save_user_capability', { markdown: WEEKLY_DIGEST }))['success']).toBe(true);
    const running = alice.call('save_user_capability', { markdown: SLOW });
    await new Promise((resolve) => setTimeout(resolve, 200));
    // Another owner's: alice is within her share, the queue is what is full.
    const queued = bob.call('save_user_capability', { markdown: WEEKLY_DIGEST });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const refused = await alice.call('save_user_capability', { markdown: WEEKLY_DIGEST });
    expect(refused.isError).toBe(true);
    expect(structured(refused)).toEqual({
      success: false,
      code: 'busy',
      error: expect.stringMatching(/too many user capabilities right now; save again/) as unknown,
    });
    expect(structured(await running)['diagnostics']).toHaveLength(1);
    expect(structured(await queued)['success']).toBe(true);
  });

  it("keeps queue room for other owners: one owner's saves past two at a time answer busy", { timeout: 60_000 }, async () => {
    // Room for three saves (one compiling, two waiting), so that alice alone could fill it.
    await start({ workers: 1, queue: 2, budgetMs: 3_000 });
    const alice = await as('key-alice');
    const bob = await as('key-bob');
    expect((await alice.json('save_user_capability', { markdown: WEEKLY_DIGEST }))['success']).toBe(true);
    const flood = Array.from({ length: 3 }, () => alice.call('save_user_capability', { markdown: SLOW }));
    // In whatever order the four saves arrive, alice holds at most two of the three places.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const other = await bob.call('save_user_capability', { markdown: WEEKLY_DIGEST });
    expect(structured(other)['success']).toBe(true);
    const codes = (await Promise.all(flood)).map((result) => structured(result)['code']);
    expect(codes.filter((code) => code === 'busy')).toHaveLength(1);
  });
});

describe('a compile worker that cannot start', () => {
  it('answers unavailable without the path, says so in /healthz and the log once, and recovers when it starts', { timeout: 30_000 }, async () => {
    // The worker module at a path of its own, as an installation the server runs from: removed
    // after the start (a rebuild or a deploy under a running server), then put back.
    const installed = path.join(tempDir('capreg-worker-'), 'user-compile-worker.js');
    const install = (): void => fs.writeFileSync(installed, `import ${JSON.stringify(WORKER.href)};\n`);
    install();
    const logs: string[] = [];
    try {
      await start({ workerUrl: pathToFileURL(installed) }, { log: (line) => logs.push(line) });
      fs.rmSync(installed);
      const alice = await as('key-alice');
      for (let attempt = 0; attempt < 2; attempt++) {
        const refused = await alice.call('save_user_capability', { markdown: WEEKLY_DIGEST });
        expect(refused.isError).toBe(true);
        expect(structured(refused)).toEqual({ success: false, code: 'unavailable', error: COMPILE_UNAVAILABLE_MESSAGE });
        expect(JSON.stringify(refused)).not.toContain(path.dirname(installed));
      }
      expect(await (await healthz()).json()).toMatchObject({ status: 'degraded', userCompile: { status: 'unavailable', reason: 'worker-not-starting' } });
      const said = logs.filter((line) => line.includes('user compile worker'));
      expect(said).toEqual([expect.stringContaining(`could not start (Cannot find module '${installed}')`) as unknown]);

      install();
      expect((await alice.json('save_user_capability', { markdown: WEEKLY_DIGEST }))['success']).toBe(true);
      const health = (await (await healthz()).json()) as Record<string, unknown>;
      expect(health['status']).toBe('ok');
      expect(health).not.toHaveProperty('userCompile');
      expect(logs.filter((line) => line.includes('user compile worker'))).toHaveLength(2);
    } finally {
      fs.rmSync(path.dirname(installed), { recursive: true, force: true });
    }
  });

  it(
    'answers unavailable for a worker module missing when the server starts, rather than compiling on the event loop with no budget',
    { timeout: 30_000 },
    async () => {
      // A deploy that lost the worker, then a restart: the pool took the missing module for a run from
      // TypeScript sources and compiled inline, so SPIN-FOREVER held the event loop for a minute.
      const missing = path.join(tempDir('capreg-worker-'), 'user-compile-worker.js');
      try {
        await start({ workerUrl: pathToFileURL(missing), budgetMs: 500 });
        const alice = await as('key-alice');
        const { value, ms } = await timed(() =>
          alice.call('save_user_capability', { markdown: WEEKLY_DIGEST.replace('Never submit', 'SPIN-BRIEFLY. Never submit') }),
        );
        expect(structured(value)).toEqual({ success: false, code: 'unavailable', error: COMPILE_UNAVAILABLE_MESSAGE });
        expect(ms).toBeLessThan(1_000);
        expect(await (await healthz()).json()).toMatchObject({ status: 'degraded', userCompile: { status: 'unavailable' } });
      } finally {
        fs.rmSync(path.dirname(missing), { recursive: true, force: true });
      }
    },
  );

  it('takes a worker that is never ready as one that cannot start, so saves do not wait for it forever', { timeout: 30_000 }, async () => {
    // A worker whose start hangs (its module read from a dead mount, say): it never says ready.
    const hanging = path.join(tempDir('capreg-worker-'), 'user-compile-worker.js');
    fs.writeFileSync(hanging, 'setInterval(() => {}, 1_000);\n');
    try {
      await start({ workerUrl: pathToFileURL(hanging), startTimeoutMs: 500 });
      const alice = await as('key-alice');
      const bob = await as('key-bob');
      const saves = [alice, bob].map((session) => timed(() => session.call('save_user_capability', { markdown: WEEKLY_DIGEST })));
      const answered = await Promise.race([Promise.all(saves), new Promise<undefined>((resolve) => setTimeout(resolve, 10_000))]);
      expect(answered, 'both saves answered within 10 s').toBeDefined();
      for (const { value, ms } of answered!) {
        expect(structured(value)).toEqual({ success: false, code: 'unavailable', error: COMPILE_UNAVAILABLE_MESSAGE });
        expect(ms).toBeLessThan(5_000);
      }
      expect(await (await healthz()).json()).toMatchObject({ status: 'degraded', userCompile: { status: 'unavailable' } });
    } finally {
      fs.rmSync(path.dirname(hanging), { recursive: true, force: true });
    }
  });

  it('answers the saves queued behind a worker that never became ready at once, not one start timeout after another', { timeout: 30_000 }, async () => {
    const hanging = path.join(tempDir('capreg-worker-'), 'user-compile-worker.js');
    fs.writeFileSync(hanging, 'setInterval(() => {}, 1_000);\n');
    try {
      await start({ workerUrl: pathToFileURL(hanging), startTimeoutMs: 1_000, workers: 1 });
      const [alice, bob] = [await as('key-alice'), await as('key-bob')];
      // Four saves queued on the one worker: each used to start a new worker that hung in turn, so the
      // last answered after four start timeouts (4 s here, 2 minutes with the default 30 s and 8 queued).
      const saves = [alice, alice, bob, bob].map((session) => timed(() => session.call('save_user_capability', { markdown: WEEKLY_DIGEST })));
      for (const { value, ms } of await Promise.all(saves)) {
        expect(structured(value)).toEqual({ success: false, code: 'unavailable', error: COMPILE_UNAVAILABLE_MESSAGE });
        expect(ms).toBeLessThan(1_800);
      }
    } finally {
      fs.rmSync(path.dirname(hanging), { recursive: true, force: true });
    }
  });
});

describe('a save is authorized again right before it is stored', () => {
  /** Compiles for 1.5 s and passes: time for the key to be revoked meanwhile. */
  const BRIEF = WEEKLY_DIGEST.replace('Never submit', 'SPIN-BRIEFLY. Never submit');
  const withAlice = (scopes: string[] | undefined) =>
    PRINCIPALS.flatMap((principal) => (principal.id !== 'alice' ? [principal] : scopes === undefined ? [] : [{ ...principal, scopes }]));

  for (const [change, scopes] of [
    ['revoked', undefined],
    ['narrowed to user-capabilities:read', ['reports:read', 'calendar:read', 'user-capabilities:read']],
  ] as const) {
    it(`refuses with the uniform error, and stores nothing, when the key is ${change} while the save compiles`, { timeout: 30_000 }, async () => {
      await start({ budgetMs: 10_000 });
      const alice = await as('key-alice');
      expect((await alice.json('save_user_capability', { markdown: WEEKLY_DIGEST }))['success']).toBe(true);
      const saving = alice.call('save_user_capability', { markdown: BRIEF });
      await new Promise((resolve) => setTimeout(resolve, 300));
      writeAtomic(path.join(dir!, 'principals.yaml'), principalsYaml(withAlice(scopes === undefined ? undefined : [...scopes])));
      expect(await runtime!.principalsStore!.reload()).toBe('activated');
      const refused = await saving;
      expect(refused.isError).toBe(true);
      expect(refused.content).toEqual([{ type: 'text', text: UNIFORM_ERROR_TEXT }]);

      // Nothing landed: with the key back, alice has the one capability saved before.
      writeAtomic(path.join(dir!, 'principals.yaml'), principalsYaml(PRINCIPALS));
      expect(await runtime!.principalsStore!.reload()).toBe('activated');
      expect(userEntries(await (await as('key-alice')).json('list_capabilities'))).toHaveLength(1);
    });
  }
});

describe('a save whose request went away while it compiled', () => {
  it('is not stored: the client that closed its connection was told nothing, and would save again', { timeout: 30_000 }, async () => {
    await start({ budgetMs: 10_000 });
    const alice = await as('key-alice');
    expect((await alice.json('save_user_capability', { markdown: WEEKLY_DIGEST }))['success']).toBe(true);
    // A client (or a proxy, or --request-timeout) gives up on the HTTP request while the save compiles.
    const gone = new AbortController();
    const request = fetch(`${http!.url}/mcp`, {
      method: 'POST',
      headers: { Authorization: 'Bearer key-alice', 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'save_user_capability', arguments: { markdown: WEEKLY_DIGEST.replace('Never submit', 'SPIN-BRIEFLY. Never submit') } },
      }),
      signal: gone.signal,
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    gone.abort();
    await expect(request).rejects.toThrow();
    // The compile ends 1.5 s after it started; then nothing may land.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(userEntries(await alice.json('list_capabilities'))).toHaveLength(1);
  });
});

describe('a save that takes longer than --request-timeout', () => {
  it('is answered: the server compiling is not the client sitting silent', { timeout: 30_000 }, async () => {
    await start({ budgetMs: 10_000 }, { http: { headersTimeoutMs: 500, requestTimeoutMs: 500 } });
    const alice = await as('key-alice');
    const { value: saved, ms } = await timed(() =>
      alice.json('save_user_capability', { markdown: WEEKLY_DIGEST.replace('Never submit', 'SPIN-BRIEFLY. Never submit') }),
    );
    expect(saved['success']).toBe(true);
    expect(ms).toBeGreaterThan(1_000);
    expect(userEntries(await alice.json('list_capabilities'))).toHaveLength(1);
  });
});

describe('a first load that waited for its render is authorized again before it is served', () => {
  it('answers the uniform error when the key is revoked while the render waited', { timeout: 30_000 }, async () => {
    await start({ budgetMs: 10_000 });
    const saved = await (await as('key-alice')).json('save_user_capability', { markdown: WEEKLY_DIGEST });
    const capabilityId = saved['capabilityId'] as string;
    // A replica that did not save it renders it on the first load, behind bob's save (1.5 s of compiling).
    const there = await replica({ budgetMs: 10_000 });
    const thereRuntime = replicas[0]!.runtime;
    const [aliceThere, bobThere] = [await as('key-alice', there), await as('key-bob', there)];
    const bobSaving = bobThere.call('save_user_capability', { markdown: WEEKLY_DIGEST.replace('Never submit', 'SPIN-BRIEFLY. Never submit') });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const loading = aliceThere.call('get_capability_protocol', { capabilityId });
    await new Promise((resolve) => setTimeout(resolve, 300));
    writeAtomic(path.join(dir!, 'principals.yaml'), principalsYaml(PRINCIPALS.filter((principal) => principal.id !== 'alice')));
    expect(await thereRuntime.principalsStore!.reload()).toBe('activated');
    const refused = await loading;
    expect(refused.content).toEqual([{ type: 'text', text: UNIFORM_ERROR_TEXT }]);
    expect(structured(await bobSaving)['success']).toBe(true);
  });

  it('answers skills/list with the uniform error, not the other skills, when the key is revoked while a render waited', { timeout: 30_000 }, async () => {
    await start({ budgetMs: 10_000 });
    const alice = await as('key-alice');
    const second = (await alice.json('save_user_capability', { markdown: WEEKLY_DIGEST.replace('name: Weekly digest', 'name: Weekly digest two') }))[
      'capabilityId'
    ] as string;
    expect((await alice.json('save_user_capability', { markdown: WEEKLY_DIGEST }))['success']).toBe(true);
    const there = await replica({ budgetMs: 10_000 });
    const thereRuntime = replicas[0]!.runtime;
    const [aliceThere, bobThere] = [await as('key-alice', there), await as('key-bob', there)];
    // One of alice's two rendered there already: only the other waits, behind bob's save.
    expect((await aliceThere.call('get_capability_protocol', { capabilityId: second })).isError).toBeFalsy();
    const bobSaving = bobThere.call('save_user_capability', { markdown: WEEKLY_DIGEST.replace('Never submit', 'SPIN-BRIEFLY. Never submit') });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const listing = fetch(`${there}/mcp`, {
      method: 'POST',
      headers: { Authorization: 'Bearer key-alice', 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'skills/list', params: {} }),
    }).then(async (response) => (await response.json()) as { result?: unknown; error?: { message: string } });
    await new Promise((resolve) => setTimeout(resolve, 300));
    writeAtomic(path.join(dir!, 'principals.yaml'), principalsYaml(PRINCIPALS.filter((principal) => principal.id !== 'alice')));
    expect(await thereRuntime.principalsStore!.reload()).toBe('activated');
    // It listed the platform skills and alice's rendered one to a key revoked seconds before.
    const answer = await listing;
    expect(answer.result).toBeUndefined();
    expect(answer.error?.message).toMatch(/not accessible/);
    expect(structured(await bobSaving)['success']).toBe(true);
  });
});

describe('a revision this server did not save is rendered off the event loop', () => {
  /** ~60 KB of blank lines: seconds of parsing, as a save's compile has. */
  const LONG = WEEKLY_DIGEST.replace(/\n*$/, '\n') + '\n'.repeat(60 * 1024);
  /** A few hundred milliseconds of parsing: long enough for loads to overlap. */
  const MEDIUM = WEEKLY_DIGEST.replace(/\n*$/, '\n') + '\n'.repeat(16 * 1024);
  const named = (markdown: string, name: string): string => markdown.replace('name: Weekly digest', `name: ${name}`);

  async function savedBy(session: Session, markdown: string): Promise<string> {
    const answer = await session.json('save_user_capability', { markdown });
    expect(answer['success']).toBe(true);
    return answer['capabilityId'] as string;
  }

  it('keeps /healthz answering on a replica while it renders, and serves the bytes the saving server serves', { timeout: 60_000 }, async () => {
    await start({ budgetMs: 30_000 });
    const alice = await as('key-alice');
    const capabilityId = await savedBy(alice, LONG);
    const here = await alice.json('get_capability_protocol', { capabilityId });

    const there = await replica({ budgetMs: 30_000 });
    const aliceThere = await as('key-alice', there);
    await healthz(there); // the replica's own start is not what is measured
    const load = timed(() => aliceThere.json('get_capability_protocol', { capabilityId }));
    let slowest = 0;
    let pending = true;
    void load.finally(() => (pending = false));
    while (pending) {
      const health = await timed(() => healthz(there));
      expect(health.value.status).toBe(200);
      slowest = Math.max(slowest, health.ms);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const { value: loaded, ms } = await load;
    expect(loaded).toEqual(here);
    // On the event loop /healthz would wait for the whole render, seconds on this input.
    expect(slowest).toBeLessThan(ms / 4);
  });

  it("shares one render among concurrent loads, and counts renders against the owner's share", { timeout: 60_000 }, async () => {
    await start({ budgetMs: 30_000 });
    const alice = await as('key-alice');
    const first = await savedBy(alice, named(MEDIUM, 'Weekly digest one'));
    const second = await savedBy(alice, named(MEDIUM, 'Weekly digest two'));
    const third = await savedBy(alice, named(MEDIUM, 'Weekly digest three'));

    const aliceThere = await as('key-alice', await replica({ budgetMs: 30_000, perOwner: 1 }));
    // Three loads of one revision are one render: alice's share of one is enough for all.
    const same = await Promise.all([1, 2, 3].map(() => aliceThere.json('get_capability_protocol', { capabilityId: first })));
    for (const answer of same) expect(answer['success']).toBe(true);
    // Two revisions at once are two renders: past alice's share, one of them answers busy.
    const both = (await Promise.all([second, third].map((capabilityId) => aliceThere.call('get_capability_protocol', { capabilityId })))).map(structured);
    const busy = both.filter((answer) => answer['code'] === 'busy');
    expect(busy).toEqual([
      { success: false, code: 'busy', error: expect.stringMatching(/preparing too many user capabilities right now; load it again/) as unknown },
    ]);
    expect(both.filter((answer) => answer['success'] === true)).toHaveLength(1);
    // A rendered revision is served without a turn of the pool; once it is free, the other renders.
    expect((await aliceThere.json('get_capability_protocol', { capabilityId: first }))['success']).toBe(true);
    for (const capabilityId of [second, third]) expect((await aliceThere.json('get_capability_protocol', { capabilityId }))['success']).toBe(true);
  });

  it('does not refuse first loads for a full queue: owners loading at once after a restart all wait their turn', { timeout: 60_000 }, async () => {
    await start({ budgetMs: 30_000 });
    const owners = [await as('key-alice'), await as('key-bob')];
    const saved = [];
    for (const owner of owners) {
      for (const name of ['one', 'two']) saved.push({ owner, capabilityId: await savedBy(owner, named(MEDIUM, `Weekly digest ${name}`)) });
    }
    // No room at all for saves waiting: the four renders still queue, two per owner.
    const there = await replica({ budgetMs: 30_000, queue: 0 });
    const sessions = new Map(await Promise.all(owners.map(async (owner) => [owner, await as(owner === owners[0] ? 'key-alice' : 'key-bob', there)] as const)));
    const loads = await Promise.all(saved.map(({ owner, capabilityId }) => sessions.get(owner)!.json('get_capability_protocol', { capabilityId })));
    expect(loads.map((answer) => answer['success'])).toEqual([true, true, true, true]);
  });

  it('answers a render past the budget with limit-exceeded, not with a stall', { timeout: 60_000 }, async () => {
    await start({ budgetMs: 30_000 });
    const alice = await as('key-alice');
    const capabilityId = await savedBy(alice, LONG);
    const aliceThere = await as('key-alice', await replica({ budgetMs: 100 }));
    const { value: result, ms } = await timed(() => aliceThere.call('get_capability_protocol', { capabilityId }));
    expect(result.isError).toBe(true);
    expect(structured(result)).toEqual({
      success: false,
      code: 'limit-exceeded',
      error: expect.stringContaining("could not be prepared within the server's budget (100 ms)") as unknown,
    });
    expect(ms).toBeLessThan(5_000);
    // Through the Skills extension: a JSON-RPC error with the same message, not the uniform one.
    const skill = aliceThere.client.request({ method: 'skills/get', params: { uri: skillUri(capabilityId) } }, z.object({}).passthrough());
    await expect(skill).rejects.toMatchObject({
      code: -32603,
      message: expect.stringContaining("could not be prepared within the server's budget (100 ms)") as unknown,
    });
    // The platform catalog is unaffected.
    expect((await aliceThere.json('get_capability_protocol', { capabilityId: 'work-reporting' }))['success']).toBe(true);
  });
});
