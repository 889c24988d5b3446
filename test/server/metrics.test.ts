// GET /metrics (docs/server.md, "Metrics and logs"): scraped over real HTTP from a runtime driven by
// a real MCP client, parsed as Prometheus text; and the serve flags through the real bin.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMetricsServer, type MetricsServerHandle } from '../../server/metrics.js';
import { startRuntime, type Runtime } from '../../server/runtime.js';
import { startHttpServer, type HttpServerHandle } from '../../server/transports/http.js';
import {
  PRINCIPALS,
  STANDARD_CAPABILITIES,
  eventually,
  httpClient,
  makeManifest,
  principalsYaml,
  serveArgv,
  tempDir,
  writeAtomic,
  writeManifest,
} from './helpers.js';

/** `name{labels}` → value, for every sample line of a Prometheus text exposition. */
function samples(text: string): Map<string, number> {
  const map = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^(\S+?(?:\{.*\})?) (\S+)$/.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    map.set(match[1]!, Number(match[2]));
  }
  return map;
}

async function scrape(url: string): Promise<{ type: string | null; samples: Map<string, number> }> {
  const response = await fetch(`${url}/metrics`);
  expect(response.status).toBe(200);
  return { type: response.headers.get('content-type'), samples: samples(await response.text()) };
}

let dir: string;
let manifestFile: string;
let runtime: Runtime;
let http: HttpServerHandle;
let metricsServer: MetricsServerHandle;

beforeAll(async () => {
  dir = tempDir();
  manifestFile = path.join(dir, 'manifest.json');
  const principalsFile = path.join(dir, 'principals.yaml');
  writeManifest(manifestFile, makeManifest(STANDARD_CAPABILITIES));
  writeAtomic(principalsFile, principalsYaml(PRINCIPALS));
  runtime = await startRuntime({ manifestFile, principalsFile, metrics: true, debounceMs: 20, pollMs: 100 });
  http = await startHttpServer(runtime, { port: 0 });
  metricsServer = await startMetricsServer(runtime.metrics!, { port: 0 });
});

afterAll(async () => {
  await metricsServer.close();
  await http.close();
  await runtime.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('GET /metrics', () => {
  it('counts requests by tool and outcome, with latency histograms, the revision and the cached projections', async () => {
    const client = await httpClient(http.url, 'key-alice-reports');
    await client.callTool({ name: 'list_capabilities', arguments: {} });
    await client.callTool({ name: 'get_capability_protocol', arguments: { capabilityId: 'work-reporting' } });
    await client.callTool({ name: 'get_capability_protocol', arguments: { capabilityId: 'work-reporting' } });
    await client.callTool({ name: 'get_capability_protocol', arguments: { capabilityId: 'personal-automation' } });
    await client.readResource({ uri: 'capability://open-help' });
    await expect(client.readResource({ uri: 'capability://calendar-digest' })).rejects.toThrow(/not found or not accessible/);
    await client.close();

    const { type, samples: s } = await scrape(metricsServer.url);
    expect(type).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(s.get('capreg_requests_total{method="tools/call",name="get_capability_protocol",outcome="ok"}')).toBe(2);
    expect(s.get('capreg_requests_total{method="tools/call",name="get_capability_protocol",outcome="error"}')).toBe(1);
    expect(s.get('capreg_requests_total{method="tools/call",name="list_capabilities",outcome="ok"}')).toBe(1);
    expect(s.get('capreg_requests_total{method="resources/read",name="capability-protocol",outcome="ok"}')).toBe(1);
    expect(s.get('capreg_requests_total{method="resources/read",name="capability-protocol",outcome="error"}')).toBe(1);
    expect(s.get('capreg_request_duration_seconds_count{method="tools/call",name="get_capability_protocol"}')).toBe(3);
    expect(s.get('capreg_request_duration_seconds_bucket{le="+Inf",method="tools/call",name="get_capability_protocol"}')).toBe(3);
    expect(s.get(`capreg_manifest_info{revision="${runtime.health().revision}"}`)).toBe(1);
    expect(s.get('capreg_catalog_projections_cached')).toBeGreaterThanOrEqual(1);
    // The standard process metrics (collectDefaultMetrics), on this runtime's own registry.
    expect(s.get('process_cpu_seconds_total')).toBeGreaterThan(0);
    expect(s.has('nodejs_heap_size_used_bytes')).toBe(true);
  });

  it('counts reloads by result and shows the new revision, only the new one', async () => {
    const before = runtime.health().revision;
    const next = makeManifest(STANDARD_CAPABILITIES, { marker: 'second' });
    writeManifest(manifestFile, next);
    await eventually(async () => expect((await scrape(metricsServer.url)).samples.get('capreg_reloads_total{file="manifest",result="activated"}')).toBe(1));
    writeAtomic(manifestFile, '{ not json');
    await eventually(async () => expect((await scrape(metricsServer.url)).samples.get('capreg_reloads_total{file="manifest",result="rejected"}')).toBe(1));
    const { samples: s } = await scrape(metricsServer.url);
    expect(s.get(`capreg_manifest_info{revision="${next.revision}"}`)).toBe(1);
    expect(s.has(`capreg_manifest_info{revision="${before}"}`)).toBe(false);
    writeManifest(manifestFile, next);
    await eventually(() => expect(runtime.health().status).toBe('ok'));
  });

  it('answers only GET/HEAD /metrics', async () => {
    expect((await fetch(`${metricsServer.url}/other`)).status).toBe(404);
    const post = await fetch(`${metricsServer.url}/metrics`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
  });

  it('drops sockets that never finish their headers within about the 5 s timeout, so slow clients cannot hold the port', async () => {
    const { hostname, port } = new URL(metricsServer.url);
    const started = performance.now();
    // As many as the listener takes (64), each sending half a request line and then nothing.
    const closed = Array.from(
      { length: 64 },
      () =>
        new Promise<number>((resolve) => {
          const socket = net.connect(Number(port), hostname, () => socket.write('GET /metrics HTTP/1.1\r\nHost: localhost\r\n'));
          socket.on('error', () => {});
          socket.resume(); // reads the 408, so that the server's end of the connection is seen
          socket.on('close', () => resolve(performance.now() - started));
        }),
    );
    const slowest = Math.max(...(await Promise.all(closed)));
    // Node's default check runs every 30 s: without a shorter one these stayed ~30 s.
    expect(slowest).toBeLessThan(9_000);
    expect((await fetch(`${metricsServer.url}/metrics`)).status).toBe(200);
  }, 20_000);

  it('keeps a registry per runtime: two runtimes in one process count apart', async () => {
    const other = await startRuntime({ manifestFile, metrics: true, watch: false });
    try {
      const text = await other.metrics!.scrape();
      expect(samples(text).has('capreg_requests_total{method="tools/call",name="get_capability_protocol",outcome="ok"}')).toBe(false);
    } finally {
      await other.close();
    }
  });
});

describe('capreg serve --metrics-port (the real bin)', () => {
  function run(args: string[]): { stderr: () => string; exit: Promise<number | null>; kill: () => void } {
    const child = spawn(process.execPath, serveArgv(['--manifest', manifestFile, ...args]), { cwd: dir, env: { PATH: process.env['PATH'] ?? '' } });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdin.on('error', () => undefined);
    return { stderr: () => stderr, exit: new Promise((resolve) => child.once('exit', (code) => resolve(code))), kill: () => child.kill('SIGTERM') };
  }

  it('serves /metrics on its own loopback port beside stdio, and exits 0', async () => {
    const served = run(['--metrics-port', '0']);
    const url = await eventually(() => /metrics on (http:\/\/127\.0\.0\.1:\d+)\/metrics/.exec(served.stderr())![1]!, 10_000);
    const { samples: s } = await scrape(url);
    expect(s.get(`capreg_manifest_info{revision="${runtime.health().revision}"}`)).toBe(1);
    served.kill();
    expect(await served.exit).toBe(0);
  });

  for (const { args, message } of [
    { args: ['--metrics-port', '70000'], message: 'capreg serve: --metrics-port must be a whole number from 0 to 65535, not "70000"\n' },
    { args: ['--metrics-host', '0.0.0.0'], message: 'capreg serve: --metrics-host needs --metrics-port\n' },
    { args: ['--log-level', 'loud'], message: 'capreg serve: --log-level must be one of fatal, error, warn, info, debug, trace, silent, not "loud"\n' },
  ]) {
    it(`refuses ${args.join(' ')} with exit 2 and one line`, async () => {
      const served = run(args);
      expect(await served.exit).toBe(2);
      expect(served.stderr()).toBe(message);
    });
  }
});
