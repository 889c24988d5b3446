// --manifest-cache: a replica killed between writing its temporary files and renaming them (SIGKILL,
// the OOM killer, a crash loop) left `.manifest.json.<pid>.<hex>.tmp`, as large as the manifest,
// in the cache folder for ever; each restart that was killed again added one. A replica now
// removes those of processes that no longer run when it starts, and leaves a live one's alone
// (two replicas may share the folder). Found by a fleet attack pass.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { serializeManifest } from '../../compiler/manifest.js';
import { startRuntime, type Runtime } from '../../server/runtime.js';
import { generateSigningKey, parseVerificationKeys, signDetached, type SigningKey, type VerificationKeys } from '../../server/signature.js';
import { STANDARD_CAPABILITIES, makeManifest, tempDir } from './helpers.js';
import { startManifestServer, type ManifestServer } from './manifest-server.js';

let signing: SigningKey;
let keys: VerificationKeys;
let server: ManifestServer;
let dir: string;
const runtimes: Runtime[] = [];

beforeEach(async () => {
  const generated = await generateSigningKey();
  signing = { kid: generated.kid, privateJwk: generated.privateJwk };
  keys = parseVerificationKeys([{ label: 'test', text: JSON.stringify(generated.publicJwks) }]);
  const manifest = serializeManifest(makeManifest(STANDARD_CAPABILITIES, { marker: 'a' }));
  server = await startManifestServer({ manifest, signature: await signDetached(Buffer.from(manifest), signing) });
  dir = tempDir();
});

afterEach(async () => {
  for (const runtime of runtimes.splice(0)) await runtime.close();
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** The pid of a process that has exited. */
function deadPid(): number {
  const result = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(result.stdout);
}

describe('the manifest cache folder', () => {
  it('loses the temporary files of killed replicas at start, not those of a live one nor other files', async () => {
    const cacheDir = path.join(dir, 'cache');
    fs.mkdirSync(cacheDir);
    const dead = deadPid();
    const leftovers = [`.manifest.json.${dead}.0badc0de.tmp`, `.manifest.json.sig.${dead}.0badc0de.tmp`];
    const kept = [`.manifest.json.${process.pid}.12345678.tmp`, 'notes.txt', `.other.json.${dead}.0badc0de.tmp`];
    for (const name of [...leftovers, ...kept]) fs.writeFileSync(path.join(cacheDir, name), 'x'.repeat(1024));

    const runtime = await startRuntime({ manifestFile: server.url, manifestSource: { keys, remote: { pollIntervalMs: 60_000, cacheDir } } });
    runtimes.push(runtime);
    expect(runtime.health()).toMatchObject({ status: 'ok', source: 'url' });
    const names = fs.readdirSync(cacheDir).sort();
    expect(names).toEqual([...kept, 'manifest.json', 'manifest.json.sig'].sort());
  });
});
