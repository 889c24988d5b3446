// Prometheus metrics of one server (docs/server.md, "Metrics and logs"). Each runtime owns its own
// registry, so tests and several runtimes in one process never share counters. No MCP SDK code here.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { allowedHostNames, hostAllowed } from './host-header.js';
import { checkingInterval } from './http-limits.js';
import type { ReloadOutcome } from './reloadable.js';

/** How a request ended: answered, answered with a known failure (`isError`/JSON-RPC error), or thrown. */
export type RequestOutcome = 'ok' | 'error' | 'exception';

/** What the metrics read at scrape time; looked up then, so they show the version being served. */
export interface MetricsSource {
  revision(): string;
  /** Catalog projections (caller-class listings and their answers) held in memory now. */
  cachedProjections(): number;
}

export const METRICS_PATH = '/metrics';
/** A scrape is one small request. */
const METRICS_HEADERS_TIMEOUT_MS = 5_000;
// Sub-millisecond lookups up to a slow user store: the tools answer from memory or one database query.
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

export class ServerMetrics {
  readonly registry = new Registry();
  readonly #requests: Counter<'method' | 'name' | 'outcome'>;
  readonly #latency: Histogram<'method' | 'name'>;
  readonly #reloads: Counter<'file' | 'result'>;
  readonly #storeErrors: Counter;

  constructor(source: MetricsSource) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.#requests = new Counter({
      name: 'capreg_requests_total',
      help: 'MCP requests by method (tools/call, resources/read), tool or resource name, and outcome',
      labelNames: ['method', 'name', 'outcome'],
      registers,
    });
    this.#latency = new Histogram({
      name: 'capreg_request_duration_seconds',
      help: 'Time to answer an MCP request, by method and tool or resource name',
      labelNames: ['method', 'name'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.#reloads = new Counter({
      name: 'capreg_reloads_total',
      help: 'Reloads of the manifest and the principals file, by result (activated, unchanged, rejected, failed)',
      labelNames: ['file', 'result'],
      registers,
    });
    this.#storeErrors = new Counter({
      name: 'capreg_user_store_errors_total',
      help: 'Calls the user store could not answer (store unavailable)',
      registers,
    });
    new Gauge({
      name: 'capreg_manifest_info',
      help: 'The manifest revision being served (value 1; the revision is the label)',
      labelNames: ['revision'],
      registers,
      collect() {
        this.reset();
        this.set({ revision: source.revision() }, 1);
      },
    });
    new Gauge({
      name: 'capreg_catalog_projections_cached',
      help: 'Catalog projections (per caller class) held in memory for the manifest being served',
      registers,
      collect() {
        this.set(source.cachedProjections());
      },
    });
  }

  /** Starts a timer for one request; call the result with its outcome when it is answered. */
  startRequest(method: 'tools/call' | 'resources/read', name: string): (outcome: RequestOutcome) => void {
    const end = this.#latency.startTimer({ method, name });
    return (outcome) => {
      end();
      this.#requests.inc({ method, name, outcome });
    };
  }

  reload(file: string, result: ReloadOutcome | 'failed'): void {
    this.#reloads.inc({ file, result });
  }

  storeError(): void {
    this.#storeErrors.inc();
  }

  /** The exposition text (Prometheus text format 0.0.4). */
  scrape(): Promise<string> {
    return this.registry.metrics();
  }
}

export interface MetricsServerHandle {
  /** e.g. `http://127.0.0.1:9464` */
  url: string;
  port: number;
  close(): Promise<void>;
}

/**
 * `GET /metrics` on its own listener, apart from the MCP port: scraping needs no credentials, so
 * it is reachable only where it listens (loopback by default, and then only under a loopback
 * `Host`, as host-header.ts explains). Everything else is 403, 404 or 405.
 */
export async function startMetricsServer(metrics: ServerMetrics, options: { host?: string; port?: number } = {}): Promise<MetricsServerHandle> {
  // On loopback only loopback names are answered: a rebound page must not read the metrics.
  // Decided once the listener has its address (below); nothing is answered before.
  let hosts: ReadonlySet<string> | undefined = new Set<string>();
  const server = http.createServer({ connectionsCheckingInterval: checkingInterval(METRICS_HEADERS_TIMEOUT_MS) }, (req, res) => {
    if (!hostAllowed(req.headers.host, hosts)) {
      res.writeHead(403, { 'Content-Type': 'text/plain' }).end('host not allowed\n');
      return;
    }
    const path = (req.url ?? '/').split('?')[0];
    if (path !== METRICS_PATH) {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found\n');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { Allow: 'GET, HEAD', 'Content-Type': 'text/plain' }).end('method not allowed\n');
      return;
    }
    metrics.scrape().then(
      (text) => {
        res.writeHead(200, { 'Content-Type': metrics.registry.contentType, 'Cache-Control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      () => res.writeHead(500, { 'Content-Type': 'text/plain' }).end('metrics unavailable\n'),
    );
  });
  // A scrape is one small request: a client that dawdles is dropped quickly (checked often enough
  // that 64 slow sockets cannot hold the port for Node's default 30 s check).
  server.headersTimeout = METRICS_HEADERS_TIMEOUT_MS;
  server.requestTimeout = 10_000;
  server.maxConnections = 64;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  hosts = allowedHostNames(options.host ?? '127.0.0.1', undefined, address.address);
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    port: address.port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
