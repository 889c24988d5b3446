// A fleet: three real `capreg serve --http` processes on one manifest URL (a local HTTP server
// standing in for the bucket CI publishes to) and one PostgreSQL user store. A new signed manifest
// is served by every replica within one poll interval (plus what a loaded machine adds to fetch and
// verify), while a request loop against all three sees no failure and only whole versions; a
// tampered publish is refused by all three, which keep the good one and say why in /healthz.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serializeManifest } from '../../compiler/manifest.js';
import { generateSigningKey, signDetached, type SigningKey } from '../../server/signature.js';
import { describeMissingPostgres, TEST_PG_URL } from '../support/postgres.js';
import {
  PRINCIPALS,
  STANDARD_CAPABILITIES,
  eventually,
  httpClient,
  makeManifest,
  principalsYaml,
  serveArgv,
  structured,
  tempDir,
  writeAtomic,
} from './helpers.js';
import { startManifestServer, type ManifestServer, type Published } from './manifest-server.js';

const POLL_SECONDS = 1;
/** What fetching and verifying may add to one poll interval on a loaded 2-core machine. */
const SLACK_MS = 700;
const REPLICAS = 3;

const text = (marker: string): string => serializeManifest(makeManifest(STANDARD_CAPABILITIES, { marker }));
const revisionOf = (manifest: string): string => (JSON.parse(manifest) as { revision: string }).revision;

interface Replica {
  child: ChildProcessWithoutNullStreams;
  url: string;
  client: Client;
  stderr: () => string;
}

async function health(
  replica: Replica,
): Promise<{ revision: string; lastReloadError: string | null; signedBy: string | null; source: string; userStore?: { status: string } }> {
  const response = await fetch(`${replica.url}/healthz`);
  return (await response.json()) as Awaited<ReturnType<typeof health>>;
}

if (TEST_PG_URL === undefined) {
  describeMissingPostgres('a fleet of three replicas', 'test/server/fleet.test.ts');
} else {
  const databaseUrl = TEST_PG_URL;
  describe('a fleet of three replicas on one manifest URL and one PostgreSQL store', () => {
    const schema = `capreg_fleet_${process.pid}_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Pool({ connectionString: databaseUrl, max: 1 });
    let dir: string;
    let signing: SigningKey;
    let server: ManifestServer;
    const replicas: Replica[] = [];
    const signed = async (manifest: string): Promise<Published> => ({ manifest, signature: await signDetached(Buffer.from(manifest), signing) });

    beforeAll(async () => {
      dir = tempDir();
      await admin.query(`CREATE SCHEMA ${schema}`);
      const storeUrl = new URL(databaseUrl);
      storeUrl.searchParams.set('options', `-c search_path=${schema}`);
      const generated = await generateSigningKey();
      signing = { kid: generated.kid, privateJwk: generated.privateJwk };
      fs.writeFileSync(path.join(dir, 'keys.jwks.json'), JSON.stringify(generated.publicJwks));
      writeAtomic(path.join(dir, 'principals.yaml'), principalsYaml(PRINCIPALS));
      server = await startManifestServer(await signed(text('a')));
      for (let i = 0; i < REPLICAS; i++) {
        const args = [
          '--http',
          '--port',
          '0',
          '--manifest',
          server.url,
          '--verify-key',
          'keys.jwks.json',
          '--require-signature',
          '--poll-interval',
          String(POLL_SECONDS),
        ];
        const child = spawn(process.execPath, serveArgv([...args, '--principals', 'principals.yaml', '--user-store', storeUrl.toString()]), {
          cwd: dir,
          env: { PATH: process.env['PATH'] ?? '' },
        });
        let stderr = '';
        child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        const url = await eventually(() => {
          const found = /on (http:\/\/127\.0\.0\.1:\d+)\/mcp/.exec(stderr)?.[1];
          if (found === undefined) throw new Error(`replica ${i} not listening yet: ${stderr}`);
          return found;
        }, 20_000);
        replicas.push({ child, url, client: await httpClient(url, 'key-alice-reports'), stderr: () => stderr });
      }
    }, 60_000);

    afterAll(async () => {
      for (const replica of replicas) await replica.client.close().catch(() => undefined);
      await Promise.all(
        replicas.map(async ({ child }) => {
          if (child.exitCode !== null) return child.exitCode;
          const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
          child.kill('SIGTERM');
          return exit;
        }),
      );
      await server?.close();
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.end();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it('every replica starts on the signed manifest from the URL, with the shared store up', async () => {
      for (const replica of replicas) {
        expect(await health(replica)).toMatchObject({
          revision: revisionOf(text('a')),
          signedBy: signing.kid,
          source: 'url',
          lastReloadError: null,
          userStore: { status: 'ok' },
        });
      }
    });

    it('a new signed manifest reaches all three within one poll interval, with no request failing meanwhile', async () => {
      const markers = ['a', 'b'];
      let failures = 0;
      let requests = 0;
      let mixed = 0;
      let stop = false;
      // Bounded in count and time: at most 2,000 calls, and it stops once all three have converged.
      const loop = (async () => {
        const deadline = Date.now() + 15_000;
        while (!stop && requests < 2_000 && Date.now() < deadline) {
          for (const replica of replicas) {
            requests += 1;
            try {
              const result = structured(await replica.client.callTool({ name: 'get_capability_protocol', arguments: { capabilityId: 'open-help' } }));
              const protocol = String(result['protocol']);
              if (result['success'] !== true) failures += 1;
              else if (markers.filter((marker) => protocol.includes(`Do not skip steps. ${marker}`)).length !== 1) mixed += 1;
            } catch {
              failures += 1;
            }
          }
        }
      })();

      const next = text('b');
      server.publish(await signed(next));
      const published = Date.now();
      const servedAfter = await Promise.all(
        replicas.map((replica) =>
          eventually(
            async () => {
              if ((await health(replica)).revision !== revisionOf(next)) throw new Error('not yet');
              return Date.now() - published;
            },
            POLL_SECONDS * 1000 + SLACK_MS + 2_000,
            20,
          ),
        ),
      );
      stop = true;
      await loop;
      for (const elapsed of servedAfter) expect(elapsed).toBeLessThanOrEqual(POLL_SECONDS * 1000 + SLACK_MS);
      expect(requests).toBeGreaterThan(REPLICAS);
      expect({ failures, mixed }).toEqual({ failures: 0, mixed: 0 });
    }, 30_000);

    it('a tampered publish is refused by all three, which keep the good manifest and say why', async () => {
      const good = revisionOf(text('b'));
      const { signature } = await signed(text('c'));
      server.publish({ manifest: text('c').replace('Does open-help', 'Does 0pen-help'), signature });
      for (const replica of replicas) {
        await eventually(async () => expect((await health(replica)).lastReloadError).toMatch(/signature refused: .*does not match its content/), 5_000, 50);
      }
      for (const replica of replicas) {
        expect(await health(replica)).toMatchObject({ revision: good, signedBy: signing.kid });
        const result = structured(await replica.client.callTool({ name: 'get_capability_protocol', arguments: { capabilityId: 'open-help' } }));
        expect(String(result['protocol'])).toContain('Do not skip steps. b');
      }
    }, 20_000);
  });
}
