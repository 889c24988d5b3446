// Streamable HTTP, stateless (SPEC §6): every `POST /mcp` is authenticated on its own and served by
// a fresh MCP server and transport, so a revoked key or a new manifest applies to the next request.
// Around it: `GET /healthz`, the OAuth protected-resource metadata, an Origin allow-list, a body
// limit, and a graceful shutdown.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import { createBearerAuthenticator } from '../auth/bearer.js';
import { createServer } from '../create-server.js';
import type { Runtime } from '../runtime.js';
import type { ToolRegistrar } from '../tools/deps.js';

export const MCP_PATH = '/mcp';
export const HEALTH_PATH = '/healthz';
export const RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource';
export const DEFAULT_BODY_LIMIT = 1024 * 1024;
const SHUTDOWN_GRACE_MS = 5_000;

export interface HttpOptions {
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** Exact origins (`https://app.example.com`) allowed to call; without a list only loopback origins are. */
  allowedOrigins?: readonly string[] | undefined;
  bodyLimit?: number;
  extraRegistrars?: readonly ToolRegistrar[];
  log?: (line: string) => void;
}

export interface HttpServerHandle {
  /** Base URL, e.g. `http://127.0.0.1:8765`. */
  url: string;
  port: number;
  /** Stop accepting, let requests in flight finish (bounded), then close. */
  close(): Promise<void>;
}

export async function startHttpServer(runtime: Runtime, options: HttpOptions = {}): Promise<HttpServerHandle> {
  const host = options.host ?? '127.0.0.1';
  const bodyLimit = options.bodyLimit ?? DEFAULT_BODY_LIMIT;
  const log = options.log ?? (() => {});
  const allowedOrigins = options.allowedOrigins ? new Set(options.allowedOrigins.map(normalizeOrigin)) : undefined;
  const authenticator = createBearerAuthenticator({ principals: runtime.principals, jwt: runtime.jwt });
  // One validator for every per-request server: the SDK would otherwise build a new Ajv each time.
  const jsonSchemaValidator = new AjvJsonSchemaValidator();
  const inFlight = new Set<Promise<void>>();
  let listenAddress = '';

  const resourceMetadataUrl = (req: IncomingMessage): string => `${baseUrl(req, listenAddress)}${RESOURCE_METADATA_PATH}`;

  const handleMcp = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const auth = await authenticator.authenticate(req.headers.authorization);
    if (!auth.ok) {
      const error = auth.reason === 'invalid' ? ', error="invalid_token", error_description="The access token is invalid or expired"' : '';
      res.setHeader('WWW-Authenticate', `Bearer resource_metadata="${resourceMetadataUrl(req)}"${error}`);
      sendJson(res, 401, { error: auth.reason === 'invalid' ? 'invalid_token' : 'unauthorized' });
      return;
    }
    const body = await readJsonBody(req, res, bodyLimit);
    if (body === undefined) return;

    const caller = auth.caller;
    const { server, cleanup } = createServer({
      catalog: runtime.catalog,
      caller: () => caller,
      names: runtime.names,
      userCapabilities: runtime.userCapabilities,
      jsonSchemaValidator,
      ...(options.extraRegistrars ? { extraRegistrars: options.extraRegistrars } : {}),
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close().catch(() => undefined);
      void cleanup().catch(() => undefined);
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body.value);
  };

  const route = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const origin = req.headers.origin;
    if (origin !== undefined && !originAllowed(origin, allowedOrigins)) {
      sendJson(res, 403, { error: 'origin not allowed' });
      return;
    }
    const path = (req.url ?? '/').split('?')[0];
    if (origin !== undefined) {
      // An allowed browser origin may read the answers (CORS); every other origin was refused above.
      res.setHeader('Access-Control-Allow-Origin', origin);
      res.setHeader('Vary', 'Origin');
      res.setHeader('Access-Control-Expose-Headers', 'WWW-Authenticate, Mcp-Protocol-Version');
      if (req.method === 'OPTIONS') {
        res.setHeader('Access-Control-Allow-Methods', path === MCP_PATH ? 'POST' : 'GET, HEAD');
        res.setHeader('Access-Control-Allow-Headers', 'Authorization, Content-Type, Accept, Mcp-Protocol-Version');
        res.setHeader('Access-Control-Max-Age', '600');
        res.writeHead(204).end();
        return;
      }
    }
    if (path === MCP_PATH) {
      if (req.method !== 'POST') {
        res.setHeader('Allow', 'POST');
        sendJson(res, 405, { jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this server is stateless, use POST' }, id: null });
        return;
      }
      await handleMcp(req, res);
      return;
    }
    if (path === HEALTH_PATH || path === RESOURCE_METADATA_PATH || path === `${RESOURCE_METADATA_PATH}${MCP_PATH}`) {
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.setHeader('Allow', 'GET, HEAD');
        sendJson(res, 405, { error: 'method not allowed' });
        return;
      }
      sendJson(res, 200, path === HEALTH_PATH ? runtime.health() : protectedResourceMetadata(req, listenAddress, runtime));
      return;
    }
    sendJson(res, 404, { error: 'not found' });
  };

  const httpServer = http.createServer((req, res) => {
    const work = route(req, res)
      .catch((error: unknown) => {
        log(`capreg serve: request failed: ${(error as Error).message}`);
        if (!res.headersSent) sendJson(res, 500, { jsonrpc: '2.0', error: { code: -32603, message: 'Internal server error' }, id: null });
        else res.end();
      })
      .finally(() => inFlight.delete(work));
    inFlight.add(work);
  });
  // Bounded time to send headers and body; slow clients cannot hold a request open forever.
  httpServer.headersTimeout = 30_000;
  httpServer.requestTimeout = 60_000;

  await new Promise<void>((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(options.port ?? 0, host, () => {
      httpServer.off('error', reject);
      resolve();
    });
  });
  const address = httpServer.address() as AddressInfo;
  listenAddress = `${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;

  let closing: Promise<void> | undefined;
  return {
    url: `http://${listenAddress}`,
    port: address.port,
    close: () =>
      (closing ??= (async () => {
        const closed = new Promise<void>((resolve) => httpServer.close(() => resolve()));
        httpServer.closeIdleConnections();
        const grace = new Promise<void>((resolve) => setTimeout(resolve, SHUTDOWN_GRACE_MS).unref());
        await Promise.race([Promise.allSettled([...inFlight]), grace]);
        httpServer.closeAllConnections();
        await closed;
      })()),
  };
}

/** Reads and parses the JSON body; answers 413/400 itself and returns undefined when it did. */
async function readJsonBody(req: IncomingMessage, res: ServerResponse, limit: number): Promise<{ value: unknown } | undefined> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    refuseTooLarge(req, res, limit);
    return undefined;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let tooLarge = false;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      tooLarge = true;
      break;
    }
    chunks.push(chunk);
  }
  if (tooLarge) {
    refuseTooLarge(req, res, limit);
    return undefined;
  }
  try {
    return { value: JSON.parse(Buffer.concat(chunks).toString('utf8')) };
  } catch {
    sendJson(res, 400, { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error: the body is not JSON' }, id: null });
    return undefined;
  }
}

function refuseTooLarge(req: IncomingMessage, res: ServerResponse, limit: number): void {
  res.setHeader('Connection', 'close');
  sendJson(res, 413, { jsonrpc: '2.0', error: { code: -32600, message: `Request body larger than ${limit} bytes` }, id: null });
  // Let the client finish sending so that it reads the 413 instead of a reset, then drop it.
  req.resume();
  const socket: Socket | null = req.socket;
  setTimeout(() => socket?.destroy(), 1_000).unref();
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'no-store' });
  res.end(body);
}

function normalizeOrigin(origin: string): string {
  return origin.trim().replace(/\/+$/, '').toLowerCase();
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Browsers send `Origin`; a page on another site must not reach a server on localhost (DNS
 * rebinding). Requests without an Origin (non-browser clients) are not affected.
 */
function originAllowed(origin: string, allowed: ReadonlySet<string> | undefined): boolean {
  if (allowed) return allowed.has(normalizeOrigin(origin));
  try {
    const url = new URL(origin);
    return (url.protocol === 'http:' || url.protocol === 'https:') && LOOPBACK_HOSTS.has(url.hostname);
  } catch {
    return false;
  }
}

const HOST_HEADER = /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/;

function baseUrl(req: IncomingMessage, listenAddress: string): string {
  const host = req.headers.host;
  return `http://${host !== undefined && HOST_HEADER.test(host) ? host : listenAddress}`;
}

function protectedResourceMetadata(req: IncomingMessage, listenAddress: string, runtime: Runtime): Record<string, unknown> {
  return {
    resource: `${baseUrl(req, listenAddress)}${MCP_PATH}`,
    ...(runtime.jwtIssuer ? { authorization_servers: [runtime.jwtIssuer] } : {}),
    bearer_methods_supported: ['header'],
    resource_name: 'capreg capability registry',
  };
}
