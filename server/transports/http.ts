// Streamable HTTP, stateless (docs/server.md): every `POST /mcp` is authenticated on its own and served by
// a fresh MCP server and transport, so a revoked key or a new manifest applies to the next request.
// Around it: `GET /healthz`, the OAuth protected-resource metadata (only with JWT verification), an
// Origin allow-list, a body limit, bounded connections and header/request timeouts, JSON-RPC batches
// run a call at a time and bounded in answer bytes (http-batch.ts), and a graceful shutdown.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import { createBearerAuthenticator, type BearerResult } from '../auth/bearer.js';
import { auditRecorder } from '../audit.js';
import { ANONYMOUS, type Caller } from '../identity.js';
import { allowedHostNames, displayHost, hostAllowed, HOST_HEADER } from '../host-header.js';
import type { LineLog } from '../log.js';
import { isLoopbackHost } from '../loopback.js';
import { checkingInterval } from '../http-limits.js';
import { NOT_JSON_RPC_MESSAGE, protoKeyRefusal, readableId } from '../invalid-params.js';
import { createServer, MAX_MESSAGE_BYTES } from '../create-server.js';
import { MAX_BATCH_ANSWER_BYTES, PacedBatchTransport, sharedIdProblem, withoutCancelledCalls } from './http-batch.js';
import { PRINCIPALS_UNCHECKED_MESSAGE, type Runtime } from '../runtime.js';
import type { ToolRegistrar } from '../tools/deps.js';

export const MCP_PATH = '/mcp';
export const HEALTH_PATH = '/healthz';
export const RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource';
export const DEFAULT_BODY_LIMIT = MAX_MESSAGE_BYTES;
const SHUTDOWN_GRACE_MS = 5_000;
/** Below the usual 1,024 open files, with room for the watchers, the user store and the log. */
export const DEFAULT_MAX_CONNECTIONS = 512;
export const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;
/**
 * MCP requests of one caller answered at once; more wait their turn, in order. A caller's flood
 * (many connections, pipelined requests, batches of 100 calls each) then queues behind itself, and
 * other callers and `/healthz` are answered between its requests (and between the calls of a
 * batch: http-batch.ts).
 */
export const DEFAULT_CALLER_CONCURRENCY = 4;
/** The longest a request waits for its caller's turn; then a 429 with Retry-After. */
export const DEFAULT_TURN_WAIT_MS = 10_000;
/**
 * How deep a request body may nest arrays and objects. No MCP message of this server's tools comes
 * near it; parsing and validating a body nested 100,000 deep recurses past the stack.
 */
export const MAX_JSON_DEPTH = 64;
/** Requests one connection may have open at once (HTTP/1.1 pipelining); past it the connection is closed. */
export const MAX_PIPELINED_REQUESTS = 8;
/**
 * 'close' listeners a connection may hold: each open request keeps up to two (its turn or its end,
 * and its transport's end; whenDone removes them), beside Node's and this file's own. A bound, not
 * a leak: without it Node warns of one on stderr when a client pipelines several requests.
 */
const SOCKET_CLOSE_LISTENERS = MAX_PIPELINED_REQUESTS * 2 + 8;
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
/** Answer to a connection over the cap when none can be let go: a short 503, then close. */
const OVER_CAPACITY_BODY = JSON.stringify({ error: 'too many connections, retry shortly' });
const OVER_CAPACITY_RESPONSE =
  'HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nCache-Control: no-store\r\nRetry-After: 1\r\n' +
  `Connection: close\r\nContent-Length: ${Buffer.byteLength(OVER_CAPACITY_BODY)}\r\n\r\n${OVER_CAPACITY_BODY}`;

export interface HttpOptions {
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** Exact origins (`https://app.example.com`) allowed to call; without a list only loopback origins are. */
  allowedOrigins?: readonly string[] | undefined;
  /** Host names a request's `Host` may name (host-header.ts); without a list, loopback names on a loopback listener and any elsewhere. */
  allowedHosts?: readonly string[] | undefined;
  bodyLimit?: number;
  /** Open connections at most; past it the oldest one that is not being answered is closed. */
  maxConnections?: number;
  /** Time a client has to send the request headers (also bounds a connection that never sends any). */
  headersTimeoutMs?: number;
  /** Time a client has to send the whole request, body included; also the most a connection may sit silent. */
  requestTimeoutMs?: number;
  /** MCP requests of one caller answered at once (DEFAULT_CALLER_CONCURRENCY). */
  callerConcurrency?: number;
  /** The longest a request waits for its caller's turn (DEFAULT_TURN_WAIT_MS). */
  turnWaitMs?: number;
  /** Bytes of answers to one batch past which its remaining calls are not run (MAX_BATCH_ANSWER_BYTES). */
  batchAnswerBytes?: number;
  extraRegistrars?: readonly ToolRegistrar[];
  log?: LineLog;
}

export interface HttpServerHandle {
  /** Base URL, e.g. `http://127.0.0.1:8765`. */
  url: string;
  port: number;
  /** Stop accepting, let requests in flight finish (bounded), then close. */
  close(): Promise<void>;
}

/** A path the server answers: the methods it serves and the small function that answers them. */
interface Route {
  methods: readonly string[];
  /** The body of a 405 for any other method: JSON-RPC on the MCP endpoint, plain JSON elsewhere. */
  methodNotAllowed: unknown;
  handle: (req: IncomingMessage, res: ServerResponse) => Promise<void> | void;
}

type Routes = ReadonlyMap<string, Route>;

const READ_METHODS = ['GET', 'HEAD'] as const;
const MCP_METHOD_NOT_ALLOWED = { jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this server is stateless, use POST' }, id: null };
const READ_METHOD_NOT_ALLOWED = { error: 'method not allowed' };

export async function startHttpServer(runtime: Runtime, options: HttpOptions = {}): Promise<HttpServerHandle> {
  const headersTimeout = options.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS;
  const requestTimeout = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const log = options.log ?? (() => {});
  const gate: Gate = {
    origins: options.allowedOrigins ? new Set(options.allowedOrigins.map(normalizeOrigin)) : undefined,
    // Decided once the listener has its address (below); nothing is answered before.
    hosts: new Set<string>(),
    refusedHost: hostRefusalLog(log),
  };
  const connections = new Connections(options.maxConnections ?? DEFAULT_MAX_CONNECTIONS);
  const inFlight = new Set<Promise<void>>();
  const listen = { address: '' };
  const routes = httpRoutes(runtime, options, connections, listen);

  const httpServer = http.createServer({ connectionsCheckingInterval: checkingInterval(headersTimeout) }, (req, res) => {
    // A connection refused as over capacity may still have had a request parsed: do not serve it.
    if (!connections.admitted(req.socket)) {
      req.socket.destroy();
      return;
    }
    if (!connections.opened(req.socket, res)) {
      // More pipelined requests than any client needs: each would hold memory until its turn.
      req.socket.destroy();
      return;
    }
    connections.setState(req.socket, 'answering');
    res.once('close', () => connections.closed(req.socket, res));
    const work = dispatch(routes, gate, req, res)
      .catch((error: unknown) => {
        log(`capreg serve: request failed: ${(error as Error).message}`);
        if (!res.headersSent) sendJson(res, 500, { jsonrpc: '2.0', error: { code: -32603, message: 'Internal server error' }, id: null });
        else res.end();
      })
      .finally(() => inFlight.delete(work));
    inFlight.add(work);
  });
  // Bounded time to send headers and body, and to sit silent (e.g. not reading the answer): slow
  // clients cannot hold a connection for long. Node answers 408 and closes when a timeout passes.
  httpServer.headersTimeout = headersTimeout;
  httpServer.requestTimeout = requestTimeout;
  httpServer.timeout = requestTimeout;
  // The server's own work on an answer (a save waiting its turn for a compile worker, up to
  // --user-compile-budget) is not the client sitting silent: closing then would drop a save the
  // client is still waiting for. Silence counts again once the answer is being written.
  httpServer.on('timeout', (socket: Socket) => {
    if (!connections.preparing(socket)) socket.destroy();
  });
  httpServer.on('connection', (socket: Socket) => connections.admit(socket));

  await new Promise<void>((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      httpServer.off('error', reject);
      resolve();
    });
  });
  const address = httpServer.address() as AddressInfo;
  gate.hosts = allowedHostNames(options.host ?? '127.0.0.1', options.allowedHosts, address.address);
  listen.address = `${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;

  let closing: Promise<void> | undefined;
  return {
    url: `http://${listen.address}`,
    port: address.port,
    close: () => (closing ??= closeGracefully(httpServer, inFlight)),
  };
}

/**
 * The route table: the MCP endpoint, the health check, and the OAuth protected-resource metadata,
 * only where a token from an authorization server can work (with API keys alone a client that finds
 * the metadata starts an OAuth flow instead of saying that the key is wrong).
 */
function httpRoutes(runtime: Runtime, options: HttpOptions, connections: Connections, listen: { address: string }): Routes {
  const routes = new Map<string, Route>([
    [MCP_PATH, { methods: ['POST'], methodNotAllowed: MCP_METHOD_NOT_ALLOWED, handle: mcpHandler(runtime, options, connections, listen) }],
    [HEALTH_PATH, { methods: READ_METHODS, methodNotAllowed: READ_METHOD_NOT_ALLOWED, handle: (_req, res) => sendJson(res, 200, runtime.health()) }],
  ]);
  if (runtime.jwt !== undefined) {
    const metadata: Route = {
      methods: READ_METHODS,
      methodNotAllowed: READ_METHOD_NOT_ALLOWED,
      handle: (req, res) => sendJson(res, 200, protectedResourceMetadata(req, listen.address, runtime)),
    };
    routes.set(RESOURCE_METADATA_PATH, metadata);
    routes.set(`${RESOURCE_METADATA_PATH}${MCP_PATH}`, metadata);
  }
  return routes;
}

/** `POST /mcp`: authenticate, read the body, then answer with a fresh MCP server for this request. */
function mcpHandler(runtime: Runtime, options: HttpOptions, connections: Connections, listen: { address: string }): Route['handle'] {
  const bodyLimit = options.bodyLimit ?? DEFAULT_BODY_LIMIT;
  const authenticator = createBearerAuthenticator({ principals: () => runtime.currentPrincipals(), jwt: runtime.jwt });
  const turns = new CallerTurns(options.callerConcurrency ?? DEFAULT_CALLER_CONCURRENCY);
  const turnWaitMs = options.turnWaitMs ?? DEFAULT_TURN_WAIT_MS;
  const batchAnswerBytes = options.batchAnswerBytes ?? MAX_BATCH_ANSWER_BYTES;
  // One validator for every per-request server: the SDK would otherwise build a new Ajv each time.
  const jsonSchemaValidator = new AjvJsonSchemaValidator();
  const advertisesOAuth = runtime.jwt !== undefined;
  const challenge = (req: IncomingMessage, invalid: boolean): string => {
    const error = invalid ? ', error="invalid_token", error_description="The access token is invalid or expired"' : '';
    return advertisesOAuth ? `Bearer resource_metadata="${baseUrl(req, listen.address)}${RESOURCE_METADATA_PATH}"${error}` : `Bearer realm="capreg"${error}`;
  };
  return async (req, res) => {
    if (headerCount(req, 'authorization') > 1) {
      // Node keeps the first of several, a proxy in front may act on another: refuse the ambiguity.
      res.setHeader('WWW-Authenticate', `${challenge(req, false)}, error="invalid_request"`);
      sendJson(res, 400, { error: 'invalid_request', error_description: 'more than one Authorization header' });
      return;
    }
    // The refusals of a token: 503 while the principals file cannot be checked, else 401.
    const refuse = (auth: Extract<BearerResult, { ok: false }>): void => {
      if (auth.reason === 'unavailable') {
        res.setHeader('Retry-After', '1');
        sendJson(res, 503, { jsonrpc: '2.0', error: { code: -32000, message: PRINCIPALS_UNCHECKED_MESSAGE }, id: null });
        return;
      }
      res.setHeader('WWW-Authenticate', challenge(req, auth.reason === 'invalid'));
      sendJson(res, 401, { error: auth.reason === 'invalid' ? 'invalid_token' : 'unauthorized' });
    };
    const auth = await authenticator.authenticate(req.headers.authorization);
    if (!auth.ok) {
      refuse(auth);
      return;
    }
    // While it waits its turn the connection may be let go to make room for another (as an idle one).
    connections.setState(req.socket, 'waiting');
    const turnCaller = auth.caller;
    const release = await turns.take(turnCaller.authenticated ? turnCaller.owner : '', req.socket, turnWaitMs);
    if (release === undefined) {
      if (req.socket.destroyed) return;
      res.setHeader('Retry-After', '1');
      sendJson(res, 429, { jsonrpc: '2.0', error: { code: -32000, message: 'Too many requests from this caller at once: retry shortly' }, id: null });
      return;
    }
    whenDone(req, res, release);
    if (req.socket.destroyed) return;
    connections.setState(req.socket, 'receiving');
    const body = await readJsonBody(req, res, bodyLimit);
    connections.setState(req.socket, 'answering');
    if (body === undefined) return;
    // The calls are in the body, which may come up to --request-timeout (plus the wait for a turn)
    // after the headers were authenticated: a key revoked or a scope narrowed meanwhile applies to
    // them. Checked again against the principals as they are now (a JWT that has expired fails too).
    const now = await authenticator.authenticate(req.headers.authorization);
    if (!now.ok) {
      refuse(now);
      return;
    }
    const caller = now.caller;
    // Before the SDK's envelope parse, which drops a `__proto__` key at the top of params
    // (server/invalid-params.ts). A batch holding such a request is refused whole, as the SDK
    // refuses a batch holding a malformed message.
    const batch = Array.isArray(body.value) ? (body.value as unknown[]) : undefined;
    const refused = batch ? batch.map(protoKeyRefusal).find((answer) => answer !== undefined) : protoKeyRefusal(body.value);
    if (refused !== undefined) {
      sendJson(res, batch ? 400 : 200, batch ? { ...refused, id: null } : refused);
      return;
    }
    // JSON that is not JSON-RPC is an invalid request (-32600), as on stdio; the SDK answers it with a
    // parse error (-32700) that names no id. A batch holding one is refused whole, as the SDK does,
    // and so is an empty batch, as JSON-RPC says (the SDK answered it 202, as if it held notifications).
    const messages = batch ?? [body.value];
    const malformed = messages.findIndex((message) => !JSONRPCMessageSchema.safeParse(message).success);
    if (malformed !== -1 || messages.length === 0) {
      const id = batch ? null : readableId(messages[malformed]);
      sendJson(res, 400, { jsonrpc: '2.0', error: { code: -32600, message: NOT_JSON_RPC_MESSAGE }, id });
      return;
    }
    const shared = batch ? sharedIdProblem(batch) : undefined;
    if (shared !== undefined) {
      sendJson(res, 400, { jsonrpc: '2.0', error: { code: -32600, message: shared }, id: null });
      return;
    }

    const callerNow = (): Caller => caller;
    const callerChecked = async (): Promise<Caller> => {
      const again = await authenticator.authenticate(req.headers.authorization);
      return again.ok ? again.caller : ANONYMOUS;
    };
    const { server, cleanup } = createServer({
      catalog: () => runtime.catalog(),
      caller: callerNow,
      callerChecked,
      names: runtime.names,
      userCapabilities: runtime.userCapabilities,
      metrics: runtime.metrics,
      audit: runtime.audit && auditRecorder(runtime.audit, callerNow, 'http'),
      jsonSchemaValidator,
      ...(options.extraRegistrars ? { extraRegistrars: options.extraRegistrars } : {}),
    });
    const sdkTransport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    const transport = batch ? new PacedBatchTransport(sdkTransport, batchAnswerBytes) : sdkTransport;
    whenDone(req, res, () => {
      void transport.close().catch(() => undefined);
      void cleanup().catch(() => undefined);
    });
    await server.connect(transport);
    // What a caller may see is its own: no cache on the way may keep an answer (sendJson's say so too).
    res.setHeader('Cache-Control', 'no-store');
    await sdkTransport.handleRequest(req, res, batch ? withoutCancelledCalls(batch) : body.value);
  };
}

/** What every request passes before its route: the names it may reach the server under. */
interface Gate {
  origins: ReadonlySet<string> | undefined;
  hosts: ReadonlySet<string> | undefined;
  refusedHost: (host: string | undefined) => void;
}

/** Host and Origin checks and CORS first (every path), then the route's method check and its handler. */
async function dispatch(routes: Routes, gate: Gate, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (headerCount(req, 'host') > 1) {
    // Node keeps the first of several, a proxy in front may act on another (RFC 9112: 400).
    sendJson(res, 400, { error: 'more than one Host header' });
    return;
  }
  if (!hostAllowed(req.headers.host, gate.hosts)) {
    gate.refusedHost(req.headers.host);
    sendJson(res, 403, { error: 'host not allowed' });
    return;
  }
  const origin = req.headers.origin;
  if (origin !== undefined && !originAllowed(origin, gate.origins)) {
    sendJson(res, 403, { error: 'origin not allowed' });
    return;
  }
  const route = routes.get((req.url ?? '/').split('?')[0]!);
  if (origin !== undefined) {
    // An allowed browser origin may read the answers (CORS); every other origin was refused above.
    res.setHeader('Access-Control-Allow-Origin', origin);
    res.setHeader('Vary', 'Origin');
    res.setHeader('Access-Control-Expose-Headers', 'WWW-Authenticate, Mcp-Protocol-Version, Retry-After');
    if (req.method === 'OPTIONS') {
      res.setHeader('Access-Control-Allow-Methods', (route?.methods ?? READ_METHODS).join(', '));
      res.setHeader('Access-Control-Allow-Headers', 'Authorization, Content-Type, Accept, Mcp-Protocol-Version');
      res.setHeader('Access-Control-Max-Age', '600');
      res.writeHead(204).end();
      return;
    }
  }
  if (route === undefined) {
    sendJson(res, 404, { error: 'not found' });
    return;
  }
  if (!route.methods.includes(req.method ?? '')) {
    res.setHeader('Allow', route.methods.join(', '));
    sendJson(res, 405, route.methodNotAllowed);
    return;
  }
  await route.handle(req, res);
}

/** Stop accepting, let requests in flight finish (bounded by the grace time), then close every connection. */
async function closeGracefully(httpServer: http.Server, inFlight: ReadonlySet<Promise<void>>): Promise<void> {
  const closed = new Promise<void>((resolve) => httpServer.close(() => resolve()));
  httpServer.closeIdleConnections();
  const grace = new Promise<void>((resolve) => setTimeout(resolve, SHUTDOWN_GRACE_MS).unref());
  await Promise.race([Promise.allSettled([...inFlight]), grace]);
  httpServer.closeAllConnections();
  await closed;
}

type ConnectionState = 'idle' | 'waiting' | 'receiving' | 'answering';

/**
 * Every open connection, oldest first, and whether it may be let go to make room: it may while it
 * has no request being answered (still sending headers, idle between requests, waiting for its
 * caller's turn, or trickling a body). Also how many requests each has open (pipelined).
 */
class Connections {
  readonly #states = new Map<Socket, ConnectionState>();
  /** The answers open on each connection (more than one when pipelined); a connection without any has no entry. */
  readonly #responses = new Map<Socket, Set<ServerResponse>>();
  readonly #max: number;

  constructor(max: number) {
    this.#max = max;
  }

  /** A new connection: over the cap the oldest one not being answered makes room, or it gets a 503. */
  admit(socket: Socket): void {
    if (this.#states.size >= this.#max) {
      const spare = this.#oldestIdle();
      if (spare === undefined) {
        socket.end(OVER_CAPACITY_RESPONSE);
        setTimeout(() => socket.destroy(), 1_000).unref();
        return;
      }
      this.#states.delete(spare);
      spare.destroy();
    }
    this.#states.set(socket, 'idle');
    socket.setMaxListeners(SOCKET_CLOSE_LISTENERS);
    socket.once('close', () => {
      this.#states.delete(socket);
      this.#responses.delete(socket);
    });
  }

  /** A request on `socket`; false past MAX_PIPELINED_REQUESTS open on it at once. */
  opened(socket: Socket, res: ServerResponse): boolean {
    let responses = this.#responses.get(socket);
    if (responses === undefined) this.#responses.set(socket, (responses = new Set()));
    responses.add(res);
    return responses.size <= MAX_PIPELINED_REQUESTS;
  }

  /**
   * Whether the server is still preparing what `socket` waits for: a request waiting for its caller's
   * turn (at most the turn wait, then 429), or received whole and being answered, and no answer on
   * it started yet (one started and not read is the client's silence). A pipelined answer ready
   * before the one ahead of it is not on the connection yet (`res.socket` is null until Node gives
   * it the socket): it is not one the client could be reading.
   */
  preparing(socket: Socket): boolean {
    const responses = this.#responses.get(socket);
    const state = this.#states.get(socket);
    if ((state !== 'answering' && state !== 'waiting') || responses === undefined) return false;
    for (const res of responses) if (res.headersSent && res.socket === socket) return false;
    return true;
  }

  /** A request on `socket` answered (or dropped): idle once none is open. */
  closed(socket: Socket, res: ServerResponse): void {
    const responses = this.#responses.get(socket);
    responses?.delete(res);
    if (responses !== undefined && responses.size > 0) return;
    this.#responses.delete(socket);
    this.setState(socket, 'idle');
  }

  admitted(socket: Socket): boolean {
    return this.#states.has(socket);
  }

  setState(socket: Socket, state: ConnectionState): void {
    if (!this.#states.has(socket)) return;
    // A pipelined request waiting or receiving does not make a connection whose earlier request is being answered spare.
    if (state !== 'answering' && this.#states.get(socket) === 'answering' && (this.#responses.get(socket)?.size ?? 0) > 1) return;
    this.#states.set(socket, state);
  }

  #oldestIdle(): Socket | undefined {
    for (const [socket, state] of this.#states) if (state !== 'answering') return socket;
    return undefined;
  }
}

/**
 * Turns per caller: at most `limit` requests of one caller at once, the others in arrival order.
 * A turn passes on from one request to the next on a later turn of the event loop, so that I/O
 * waiting meanwhile (a `/healthz`, another caller's request) is served between them.
 */
class CallerTurns {
  readonly #running = new Map<string, number>();
  readonly #waiting = new Map<string, (() => void)[]>();
  readonly #limit: number;

  constructor(limit: number) {
    this.#limit = limit;
  }

  /**
   * Resolves with the function that ends the turn, or with undefined (no turn taken) when `socket`
   * closes or `timeoutMs` passes first. Nothing is left on the socket once it resolves.
   */
  take(caller: string, socket: Socket, timeoutMs: number): Promise<(() => void) | undefined> {
    if (socket.destroyed) return Promise.resolve(undefined);
    const running = this.#running.get(caller) ?? 0;
    if (running < this.#limit) {
      this.#running.set(caller, running + 1);
      return Promise.resolve(this.#ender(caller));
    }
    return new Promise((resolve) => {
      const queue = this.#waiting.get(caller) ?? [];
      this.#waiting.set(caller, queue);
      const settle = (ender: (() => void) | undefined): void => {
        clearTimeout(timer);
        socket.off('close', giveUp);
        resolve(ender);
      };
      const start = (): void => settle(this.#ender(caller));
      const giveUp = (): void => {
        const at = queue.indexOf(start);
        if (at !== -1) queue.splice(at, 1);
        if (queue.length === 0 && this.#waiting.get(caller) === queue) this.#waiting.delete(caller);
        settle(undefined);
      };
      const timer = setTimeout(giveUp, timeoutMs);
      socket.once('close', giveUp);
      queue.push(start);
    });
  }

  #ender(caller: string): () => void {
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      setImmediate(() => {
        const queue = this.#waiting.get(caller);
        const next = queue?.shift();
        if (queue?.length === 0) this.#waiting.delete(caller);
        // The turn passes to the next request as it is (the count stays), or the caller has one less.
        if (next !== undefined) next();
        else {
          const running = (this.#running.get(caller) ?? 1) - 1;
          if (running > 0) this.#running.set(caller, running);
          else this.#running.delete(caller);
        }
      });
    };
  }
}

/**
 * Run `done` once, when the answer to `req` is finished or its connection closes, whichever comes
 * first: Node never closes the queued answer of a pipelined request whose socket closed. Nothing
 * stays on the (keep-alive) socket after.
 */
function whenDone(req: IncomingMessage, res: ServerResponse, done: () => void): void {
  const socket = req.socket;
  const once = (): void => {
    res.off('close', once);
    socket.off('close', once);
    done();
  };
  if (socket.destroyed) return once();
  res.once('close', once);
  socket.once('close', once);
}

/** Reads and parses the JSON body; answers 413/400 itself and returns undefined when it did. */
async function readJsonBody(req: IncomingMessage, res: ServerResponse, limit: number): Promise<{ value: unknown } | undefined> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    refuseTooLarge(res, limit);
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
    refuseTooLarge(res, limit);
    return undefined;
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (nestsDeeperThan(text, MAX_JSON_DEPTH)) {
    sendJson(res, 400, { jsonrpc: '2.0', error: { code: -32600, message: `Invalid request: the body nests deeper than ${MAX_JSON_DEPTH} levels` }, id: null });
    return undefined;
  }
  try {
    return { value: JSON.parse(text) };
  } catch {
    sendJson(res, 400, { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error: the body is not JSON' }, id: null });
    return undefined;
  }
}

/** Whether `text`, read as JSON, opens more than `max` arrays or objects inside each other (brackets in strings do not count). */
function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (inString) {
      if (code === 0x5c)
        i += 1; // a backslash: the next character is escaped
      else if (code === 0x22) inString = false;
    } else if (code === 0x22) inString = true;
    else if (code === 0x5b || code === 0x7b) {
      depth += 1;
      if (depth > max) return true;
    } else if (code === 0x5d || code === 0x7d) depth -= 1;
  }
  return false;
}

function refuseTooLarge(res: ServerResponse, limit: number): void {
  sendJson(res, 413, { jsonrpc: '2.0', error: { code: -32600, message: `Request body larger than ${limit} bytes` }, id: null });
}

/** How many times the request carries the header `lowerName` (Node folds some repeated headers into one). */
function headerCount(req: IncomingMessage, lowerName: string): number {
  let count = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i]!.toLowerCase() === lowerName) count += 1;
  return count;
}

/** Whether a body follows the request's headers: a Transfer-Encoding, or a Content-Length other than 0. */
function hasBody(req: IncomingMessage): boolean {
  if (req.headers['transfer-encoding'] !== undefined) return true;
  const length = req.headers['content-length'];
  return length !== undefined && length.trim() !== '0';
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  // A refusal before the body was read (401, 403, 413, 429, 503…) of a request whose body is still
  // coming: Node would read and throw away whatever the client sends, for up to --request-timeout
  // (an unauthenticated caller streamed 7 GB in 8 s), so the connection ends 1 s after the answer.
  // Until then the rest is read and dropped (a lingering close, as web servers do): closing with
  // unread bytes sends a reset, which can reach the client before the answer it has not read yet.
  // Only a request that has a body (RFC 9112 6.3): `complete` is still false for a GET answered in
  // the handler's first turn, and closing there would end every keep-alive connection on a 404/405.
  const unread = status >= 400 && !res.req.complete && hasBody(res.req);
  res.writeHead(status, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(body),
    'Cache-Control': 'no-store',
    ...(unread ? { Connection: 'close' } : {}),
  });
  res.end(body);
  if (unread) {
    res.req.resume();
    const socket: Socket | null = res.req.socket;
    setTimeout(() => socket?.destroy(), 1_000).unref();
  }
}

function normalizeOrigin(origin: string): string {
  return origin.trim().replace(/\/+$/, '').toLowerCase();
}

/**
 * Browsers send `Origin`; a page on another site must not reach a server on localhost (DNS
 * rebinding). Requests without an Origin (non-browser clients) are not affected.
 */
function originAllowed(origin: string, allowed: ReadonlySet<string> | undefined): boolean {
  if (allowed) return allowed.has(normalizeOrigin(origin));
  try {
    const url = new URL(origin);
    return (url.protocol === 'http:' || url.protocol === 'https:') && isLoopbackHost(url.hostname);
  } catch {
    return false;
  }
}

/**
 * Logs refused `Host` headers: the first at once, then at most one line a minute with how many
 * there were (written when the minute is up, whether or not more come), so that an operator behind
 * a proxy learns the fix and a flood does not fill the log.
 */
export function hostRefusalLog(log: LineLog): (host: string | undefined) => void {
  let lastLine = Number.NEGATIVE_INFINITY;
  let refused = 0;
  let example = '';
  let pending: NodeJS.Timeout | undefined;
  const write = (): void => {
    clearTimeout(pending);
    pending = undefined;
    if (refused === 0) return;
    log(
      `capreg serve: refused ${refused} request(s) for a Host not allowed (e.g. ${example}); ` +
        'a reverse proxy that forwards Host needs --allowed-hosts with its name',
      'warn',
    );
    lastLine = Date.now();
    refused = 0;
  };
  return (host) => {
    refused += 1;
    example = displayHost(host);
    const wait = lastLine + 60_000 - Date.now();
    if (wait <= 0) write();
    else pending ??= setTimeout(write, wait).unref();
  };
}

/**
 * The URL clients reach the server under: the `Host` they sent, and `https` when a proxy that
 * terminates TLS says so (`X-Forwarded-Proto`, its first value when a chain of proxies lists
 * several). An SDK client refuses protected-resource metadata whose `resource` has another origin
 * than the URL it called: behind such a proxy the metadata said `http://` and OAuth never started.
 * The header only changes what this request's own answer says, so it needs no trust.
 */
function baseUrl(req: IncomingMessage, listenAddress: string): string {
  const host = req.headers.host;
  const forwarded = req.headers['x-forwarded-proto'];
  const scheme = typeof forwarded === 'string' && forwarded.split(',')[0]!.trim().toLowerCase() === 'https' ? 'https' : 'http';
  return `${scheme}://${host !== undefined && HOST_HEADER.test(host) ? host : listenAddress}`;
}

function protectedResourceMetadata(req: IncomingMessage, listenAddress: string, runtime: Runtime): Record<string, unknown> {
  return {
    resource: `${baseUrl(req, listenAddress)}${MCP_PATH}`,
    ...(runtime.jwtIssuer ? { authorization_servers: [runtime.jwtIssuer] } : {}),
    bearer_methods_supported: ['header'],
    resource_name: 'capreg capability registry',
  };
}
