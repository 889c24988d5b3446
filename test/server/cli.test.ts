// `capreg serve` as a command: argument checking (exit 2 / UsageError), refusing to start on an
// invalid manifest (exit 2 with a clear message), and a spawned HTTP server that prints how to
// connect and shuts down cleanly (exit 0) on SIGTERM and SIGINT.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { request as httpRequest } from 'node:http';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { serveCommand } from '../../cli/commands/serve.js';
import { UsageError, type CliContext } from '../../cli/context.js';
import { serializeManifest } from '../../compiler/manifest.js';
import { PRINCIPALS, STANDARD_CAPABILITIES, makeManifest, principalsYaml, serveArgv, tempDir, writeAtomic, writeManifest } from './helpers.js';

let dir: string;
let manifestFile: string;
let principalsFile: string;

function context(): CliContext & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { cwd: dir, env: {}, stdout: (text) => out.push(text), stderr: (text) => err.push(text), out, err };
}

beforeEach(() => {
  dir = tempDir();
  manifestFile = path.join(dir, 'manifest.json');
  principalsFile = path.join(dir, 'principals.yaml');
  writeManifest(manifestFile, makeManifest(STANDARD_CAPABILITIES));
  writeAtomic(principalsFile, principalsYaml(PRINCIPALS));
});

afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('capreg serve arguments', () => {
  const usage: { label: string; argv: string[]; message: RegExp }[] = [
    { label: 'an unknown flag', argv: ['--manifest', 'manifest.json', '--verbose'], message: /verbose/ },
    { label: 'HTTP without any way to authenticate', argv: ['--manifest', 'manifest.json', '--http'], message: /--principals/ },
    { label: 'an HTTP flag on stdio', argv: ['--manifest', 'manifest.json', '--port', '9000'], message: /only with --http/ },
    { label: 'a bad port', argv: ['--manifest', 'manifest.json', '--http', '--principals', 'principals.yaml', '--port', 'eighty'], message: /--port/ },
    { label: 'a bad tool prefix', argv: ['--manifest', 'manifest.json', '--tool-prefix', 'a b'], message: /--tool-prefix/ },
    { label: 'a tool prefix starting with a dash', argv: ['--manifest', 'manifest.json', '--tool-prefix', '-x'], message: /--tool-prefix/ },
    {
      label: 'a JWT key without issuer and audience',
      argv: ['--manifest', 'manifest.json', '--http', '--jwt-public-key', 'key.pem'],
      message: /--jwt-issuer and --jwt-audience/,
    },
    {
      label: 'both JWT key sources',
      argv: ['--manifest', 'manifest.json', '--http', '--jwt-public-key', 'k.pem', '--jwt-jwks', 'j.json', '--jwt-issuer', 'i', '--jwt-audience', 'a'],
      message: /not both/,
    },
    {
      label: 'an allowed origin with a path',
      argv: ['--manifest', 'manifest.json', '--http', '--principals', 'principals.yaml', '--allowed-origins', 'https://a.example/app'],
      message: /not an origin/,
    },
    {
      label: 'an allowed host with a port',
      argv: ['--manifest', 'manifest.json', '--http', '--principals', 'principals.yaml', '--allowed-hosts', 'mcp.example.com:443'],
      message: /--allowed-hosts: "mcp\.example\.com:443" is not a host name/,
    },
    {
      label: 'an allowed host that is a URL',
      argv: ['--manifest', 'manifest.json', '--http', '--principals', 'principals.yaml', '--allowed-hosts', 'a.example,https://b.example'],
      message: /"https:\/\/b\.example" is not a host name/,
    },
    {
      label: 'an empty list of allowed hosts',
      argv: ['--manifest', 'manifest.json', '--http', '--principals', 'principals.yaml', '--allowed-hosts', ' , '],
      message: /at least one host name/,
    },
    {
      label: 'allowed hosts on stdio',
      argv: ['--manifest', 'manifest.json', '--allowed-hosts', 'a.example'],
      message: /--allowed-hosts applies only with --http/,
    },
    { label: 'no registry to find the default manifest in', argv: [], message: /no registry found/ },
  ];
  for (const { label, argv, message } of usage) {
    it(`refuses ${label} as a usage error`, async () => {
      const error = await serveCommand(argv, context()).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(UsageError);
      expect((error as Error).message).toMatch(message);
    });
  }

  const refusal = async (argv: string[]): Promise<string> => {
    const error = await serveCommand(argv, context()).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  };

  it('refuses a missing --manifest, naming the flag and the file', async () => {
    expect(await refusal(['--manifest', 'nope.json'])).toBe(
      `--manifest nope.json: no such file: ${path.join(dir, 'nope.json')} (a relative path on the command line starts from the working directory, ${dir})`,
    );
  });

  it('uses dist/manifest.json under the registry root by default, and says to build when it is missing', async () => {
    fs.mkdirSync(path.join(dir, 'capabilities'));
    const message = await refusal(['--root', dir]);
    expect(message).toContain(path.join(dir, 'dist', 'manifest.json'));
    expect(message).toMatch(/capreg build/);
  });

  it('names --principals, not the build, when the principals file is missing', async () => {
    fs.mkdirSync(path.join(dir, 'capabilities'));
    fs.mkdirSync(path.join(dir, 'dist'));
    fs.copyFileSync(manifestFile, path.join(dir, 'dist', 'manifest.json'));
    const message = await refusal(['--root', dir, '--principals', 'missing.yaml']);
    expect(message).toMatch(/^--principals missing\.yaml: no such file: /);
    expect(message).toContain(path.join(dir, 'missing.yaml'));
    expect(message).not.toMatch(/capreg build/);
  });

  for (const flag of ['--jwt-public-key', '--jwt-jwks']) {
    it(`names ${flag} when its file is missing`, async () => {
      const message = await refusal(['--manifest', 'manifest.json', '--http', flag, 'keys/none', '--jwt-issuer', 'i', '--jwt-audience', 'a']);
      expect(message).toMatch(new RegExp(`^${flag} keys/none: no such file: `));
    });
  }

  it('refuses a plain-HTTP --jwt-jwks URL without repeating its credentials or query (exit 2)', async () => {
    const ctx = context();
    const jwks = 'http://reader:pw-secret-1@keys.example/jwks.json?token=tok-secret-2';
    const argv = ['--manifest', 'manifest.json', '--http', '--jwt-jwks', jwks, '--jwt-issuer', 'i', '--jwt-audience', 'a'];
    expect(await serveCommand(argv, ctx)).toBe(2);
    const stderr = ctx.err.join('');
    expect(stderr).toContain('--jwt-jwks must be an https:// URL (or a file), not http://keys.example/jwks.json');
    expect(stderr).not.toMatch(/secret/);
    // One that cannot be parsed cannot be cleaned: it is not repeated at all.
    const unparsable = context();
    const bad = ['--manifest', 'manifest.json', '--http', '--jwt-jwks', 'https://reader:pw-secret-3@[::1/jwks', '--jwt-issuer', 'i', '--jwt-audience', 'a'];
    expect(await serveCommand(bad, unparsable)).toBe(2);
    expect(unparsable.err.join('')).toContain('--jwt-jwks is not a valid URL');
    expect(unparsable.err.join('')).not.toMatch(/secret/);
  });

  for (const flag of ['--jwt-public-key', '--jwt-jwks']) {
    it(`reads ${flag} bounded: a file over 64 KiB is refused (exit 2)`, async () => {
      fs.writeFileSync(path.join(dir, 'big.key'), ' '.repeat(64 * 1024 + 1));
      const ctx = context();
      const argv = ['--manifest', 'manifest.json', '--http', flag, 'big.key', '--jwt-issuer', 'i', '--jwt-audience', 'a'];
      expect(await serveCommand(argv, ctx)).toBe(2);
      expect(ctx.err.join('')).toBe(
        'capreg serve: no registry root, so no user store: user-defined capabilities are off (pass --user-store or --root)\n' +
          `capreg serve: cannot read ${flag} ${path.join(dir, 'big.key')}: it is 65537 bytes, over the limit of 65536\n`,
      );
    });
  }

  it.each([
    ['not JSON', 'nope', 'it is not JSON'],
    ['without keys', '{"key": []}', 'it is not a key set ({"keys": [...]})'],
    ['with a key that is not a JWK', '{"keys": [1]}', 'jose refuses it as a key set'],
  ])('refuses a --jwt-jwks file %s with exit 2 and one line that says why', async (_label, text, reason) => {
    fs.writeFileSync(path.join(dir, 'bad.jwks'), text);
    const ctx = context();
    const argv = ['--manifest', 'manifest.json', '--http', '--jwt-jwks', 'bad.jwks', '--jwt-issuer', 'i', '--jwt-audience', 'a'];
    expect(await serveCommand(argv, ctx)).toBe(2);
    expect(ctx.err.join('')).toContain(`capreg serve: cannot read --jwt-jwks ${path.join(dir, 'bad.jwks')} as a JSON Web Key Set: ${reason}`);
  });

  it('reads --verify-key bounded: a file over 64 KiB is refused', async () => {
    fs.writeFileSync(path.join(dir, 'big.jwks'), ' '.repeat(64 * 1024 + 1));
    expect(await refusal(['--manifest', 'manifest.json', '--verify-key', 'big.jwks'])).toBe(
      `--verify-key: cannot read ${path.join(dir, 'big.jwks')}: it is 65537 bytes, over the limit of 65536`,
    );
  });

  const invalid: { label: string; text: () => string; message: RegExp }[] = [
    { label: 'not JSON', text: () => '{"schemaVersion": 1,', message: /not valid JSON/ },
    {
      label: 'tampered',
      text: () => serializeManifest(makeManifest(STANDARD_CAPABILITIES)).replace('Do not skip steps.', 'Do everything.'),
      message: /integrity/,
    },
    {
      label: 'from a newer format',
      text: () => serializeManifest({ ...makeManifest(STANDARD_CAPABILITIES), schemaVersion: 7 }),
      message: /schemaVersion 7 is not supported/,
    },
  ];
  for (const { label, text, message } of invalid) {
    it(`exits 2 on a manifest that is ${label}`, async () => {
      fs.writeFileSync(manifestFile, text());
      const ctx = context();
      expect(await serveCommand(['--manifest', 'manifest.json'], ctx)).toBe(2);
      expect(ctx.err.join('')).toMatch(/invalid manifest/);
      expect(ctx.err.join('')).toMatch(message);
    });
  }

  it('exits 2 on an invalid principals file, without echoing key hashes', async () => {
    const hash = 'ab'.repeat(32);
    fs.writeFileSync(
      principalsFile,
      `principals:\n  - id: a\n    keySha256: ${hash}\n    scopes: [reports:read]\n  - id: a\n    keySha256: ${hash}\n    scopes: []\n`,
    );
    const ctx = context();
    expect(await serveCommand(['--manifest', 'manifest.json', '--principals', 'principals.yaml'], ctx)).toBe(2);
    expect(ctx.err.join('')).toMatch(/invalid principals file .*principals\[1\]\.id is the same as principals\[0\]\.id/);
    expect(ctx.err.join('')).not.toContain(hash);
  });
});

describe('capreg serve --http as a process', () => {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`prints how to connect, serves, and exits 0 on ${signal}`, async () => {
      const child = spawn(process.execPath, serveArgv(['--manifest', manifestFile, '--principals', principalsFile, '--http', '--port', '0']), {
        cwd: dir,
        env: { PATH: process.env['PATH'] ?? '' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      const url = await new Promise<string>((resolve, reject) => {
        child.stderr.on('data', (chunk: Buffer) => {
          stderr += chunk.toString();
          const match = /on (http:\/\/127\.0\.0\.1:\d+)\/mcp/.exec(stderr);
          if (match && /"mcpServers"[\s\S]*\n}\n/.test(stderr)) resolve(match[1] as string);
        });
        child.once('exit', () => reject(new Error(`exited early: ${stderr}`)));
      });
      expect(stderr).toContain('"mcpServers"');
      expect(stderr).toContain(`${url}/mcp`);
      const health = (await (await fetch(`${url}/healthz`)).json()) as { status: string; capabilities: number };
      expect(health).toMatchObject({ status: 'ok', capabilities: 4 });
      const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      child.kill(signal);
      expect(await exit).toBe(0);
      expect(stdout).toBe('');
    });
  }
  it('answers the names of --allowed-hosts, refuses a foreign Host and says so in its log, and exits 0', async () => {
    const argv = ['--manifest', manifestFile, '--principals', principalsFile, '--http', '--port', '0', '--allowed-hosts', 'mcp.example.com'];
    const child = spawn(process.execPath, serveArgv(argv), { cwd: dir, env: { PATH: process.env['PATH'] ?? '' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    const port = await new Promise<number>((resolve, reject) => {
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        const match = /on http:\/\/127\.0\.0\.1:(\d+)\/mcp/.exec(stderr);
        if (match) resolve(Number(match[1]));
      });
      child.once('exit', () => reject(new Error(`exited early: ${stderr}`)));
    });
    const status = (host: string): Promise<number> =>
      new Promise((resolve, reject) => {
        const req = httpRequest({ host: '127.0.0.1', port, path: '/healthz', headers: { Host: host }, agent: false }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject).end();
      });
    expect(await status('mcp.example.com')).toBe(200);
    expect(await status(`127.0.0.1:${port}`)).toBe(200);
    expect(await status('rebound.attacker.example')).toBe(403);
    const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exit).toBe(0);
    const refusal = stderr.split('\n').filter((line) => line.includes('Host not allowed'));
    expect(refusal).toHaveLength(1);
    const record = JSON.parse(refusal[0]!) as { level: string; msg: string };
    expect(record.level).toBe('warn');
    expect(record.msg).toContain('refused 1 request(s) for a Host not allowed (e.g. "rebound.attacker.example")');
    expect(stderr).not.toMatch(/error|Error/);
  });
});
