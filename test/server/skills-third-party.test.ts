// capreg's Skills extension driven by a client this project did not write: the extension's own SDK
// (`@olaservo/ext-skills`, from modelcontextprotocol/ext-skills) against the spawned real bin over
// HTTP. Listing, digest and size checks, frontmatter identity and the error all come from its code.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  checkSkillLimits,
  frontmatterMatchesEntry,
  getSkill,
  listSkills,
  manifestOf,
  readSkill,
  readSkillUriVerified,
  serverSupportsSkills,
  verifyDigest,
  type SkillEntry,
  type SkillsClient,
} from '@olaservo/ext-skills/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  PRINCIPALS,
  STANDARD_CAPABILITIES,
  eventually,
  httpClient,
  ids,
  makeManifest,
  principalsYaml,
  serveArgv,
  structured,
  tempDir,
  writeAtomic,
  writeManifest,
} from './helpers.js';

const manifest = makeManifest(STANDARD_CAPABILITIES);
const [ALICE, , CAROL] = PRINCIPALS as [(typeof PRINCIPALS)[number], (typeof PRINCIPALS)[number], (typeof PRINCIPALS)[number]];
let dir: string;
let served: { kill: () => void; exit: Promise<number | null>; stderr: () => string };
let url: string;
const clients: Client[] = [];

beforeAll(async () => {
  dir = tempDir();
  writeManifest(path.join(dir, 'manifest.json'), manifest);
  writeAtomic(path.join(dir, 'principals.yaml'), principalsYaml(PRINCIPALS));
  const child = spawn(process.execPath, serveArgv(['--manifest', 'manifest.json', '--principals', 'principals.yaml', '--http', '--port', '0']), {
    cwd: dir,
    env: { PATH: process.env['PATH'] ?? '' },
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  served = { kill: () => child.kill('SIGTERM'), exit, stderr: () => stderr };
  url = await eventually(() => /on (http:\/\/127\.0\.0\.1:\d+)\/mcp/.exec(stderr)![1]!, 10_000);
});

afterAll(async () => {
  for (const client of clients) await client.close();
  served.kill();
  expect(await served.exit).toBe(0);
  fs.rmSync(dir, { recursive: true, force: true });
});

/**
 * The official SDK `Client` as the package's `SkillsClient`. The interface is structural (it names
 * `readResource`, `request`, `getServerCapabilities`, `getInstructions` as the SDK Client has them),
 * so the client is passed as it is; this assignment is where the type checker confirms the fit.
 */
async function connect(key: string): Promise<{ client: Client; skills: SkillsClient }> {
  const client = await httpClient(url, key);
  clients.push(client);
  const skills: SkillsClient = client;
  return { client, skills };
}

async function visibleIds(client: Client): Promise<string[]> {
  return ids(structured(await client.callTool({ name: 'list_capabilities', arguments: {} })));
}

/** The JSON-RPC error a rejected call carried: code and message, as the SDK surfaced them. */
async function rejection(call: Promise<unknown>): Promise<{ code: unknown; message: unknown; data: unknown }> {
  try {
    await call;
  } catch (error) {
    const { code, message, data } = error as { code?: unknown; message?: unknown; data?: unknown };
    return { code, message, data };
  }
  throw new Error('the call succeeded');
}

describe('the Skills extension through @olaservo/ext-skills (a client capreg did not write)', () => {
  it('finds the extension declared and lists, per caller, exactly what list_capabilities shows', async () => {
    const listings = new Map<string, SkillEntry[]>();
    for (const principal of [ALICE, CAROL]) {
      const { client, skills } = await connect(principal.key);
      expect(serverSupportsSkills(skills)).toBe(true);
      const entries = await listSkills(skills);
      expect(entries.map((entry) => entry.uri)).toEqual((await visibleIds(client)).map((id) => `skill://${id}/SKILL.md`));
      for (const entry of entries) expect(checkSkillLimits(entry)).toMatchObject({ withinLimits: true, exceeded: [] });
      listings.set(principal.id, entries);
    }
    // The two scopes see different catalogs; a sanity check that the comparison above had teeth.
    expect(listings.get(ALICE.id)!.map((entry) => entry.uri)).toContain('skill://work-reporting/SKILL.md');
    expect(listings.get(ALICE.id)!.map((entry) => entry.uri)).not.toContain('skill://calendar-digest/SKILL.md');
    expect(listings.get(CAROL.id)!.map((entry) => entry.uri)).toContain('skill://calendar-digest/SKILL.md');
    expect(listings.get(CAROL.id)!.map((entry) => entry.uri)).not.toContain('skill://work-reporting/SKILL.md');
  });

  it('reads every listed skill with its verified read: digest, size and frontmatter checked by its code', async () => {
    for (const principal of [ALICE, CAROL]) {
      const { skills } = await connect(principal.key);
      const entries = await listSkills(skills);
      expect(entries.length).toBeGreaterThan(0);
      for (const entry of entries) {
        // readSkill: the manifest must be well formed, the bytes must match the self ref's size and
        // digest, and the SKILL.md frontmatter must equal the entry's; any failure throws.
        const text = await readSkill(skills, entry);
        const self = manifestOf(entry)!.find((ref) => ref.uri === entry.uri)!;
        expect(await readSkillUriVerified(skills, entry.uri, self.digest)).toBe(text);
        expect(frontmatterMatchesEntry(text, entry)).toBe(true);
        expect(await getSkill(skills, entry.uri)).toEqual(entry);
        // The same checks reject a changed byte or a changed field, so the passes above mean something.
        expect(verifyDigest(`${text} `, self.digest)).toBe(false);
        expect(frontmatterMatchesEntry(text, { ...entry, frontmatter: { ...entry.frontmatter, name: 'other' } })).toBe(false);
      }
    }
  });

  it('answers a forbidden skill and a missing one with the same error, on skills/get and on the verified read', async () => {
    const { skills: carol } = await connect(CAROL.key);
    const forbiddenEntry = await getSkill(carol, 'skill://calendar-digest/SKILL.md');
    const digest = manifestOf(forbiddenEntry)![0]!.digest;
    const { skills: alice } = await connect(ALICE.key);
    const forbidden = await rejection(getSkill(alice, 'skill://calendar-digest/SKILL.md'));
    const missing = await rejection(getSkill(alice, 'skill://no-such-skill/SKILL.md'));
    expect(forbidden.code).toBe(-32602);
    expect(forbidden).toEqual(missing);
    const forbiddenRead = await rejection(readSkillUriVerified(alice, 'skill://calendar-digest/SKILL.md', digest));
    const missingRead = await rejection(readSkillUriVerified(alice, 'skill://no-such-skill/SKILL.md', digest));
    expect(forbiddenRead).toEqual(missingRead);
    expect(forbiddenRead).toEqual(forbidden);
  });
});
