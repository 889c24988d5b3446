// A request whose params its method's schema refuses is answered JSON-RPC -32602 (Invalid params)
// with one short line, on every transport. The SDK (1.32.2) parses a request with the schema its
// handler was set with inside the handler's wrapper (shared/protocol.js:914-920, setRequestHandler),
// and the ZodError it throws reaches Protocol's answer, which takes a non-numeric `code` for -32603
// (Internal error) and zod's multi-line JSON dump for the message (shared/protocol.js:426-427). For
// tools/call that parse runs before the SDK's own -32602 check (server/index.js:95-135), which would
// have dumped the same JSON. Upstream: modelcontextprotocol/typescript-sdk#2284.
//
// So every schema a handler is set with is recorded, and the transport runs the same parse (the
// SDK's safeParse, the recorded schema) before the SDK sees the request: a refused request is
// answered here and goes no further; any other reaches the SDK unchanged. Methods without a
// handler are not checked against a schema (-32601 stays the SDK's), and handlers that take params
// loosely to give their own answers (resources/read, skills/*) refuse nothing here but a
// `__proto__` key (below). Only public API: the server's own setRequestHandler,
// removeRequestHandler and connect are wrapped on this one instance.
//
// A tools/call the SDK itself refuses inside its handler (an unknown tool, arguments the tool's input
// schema refuses) is answered as a tool result, `isError` with no structuredContent, whose text
// names what was sent: `Tool <name> not found`, `Unrecognized key: "<key>"` (server/mcp.js,
// McpServer's tools/call handler). Such a text is cut to one line of the same bound here, so a
// 1 MiB name or key with terminal escapes is not sent back; capreg's tools always answer with
// structuredContent, and their answers pass unchanged.
//
// A request whose params hold an own `__proto__` key, at any depth, is refused the same way, whatever
// its method. JSON.parse keeps one as an own key, but a copy made by assignment turns it into the
// copy's prototype or drops it (the SDK's zod parse of a tool's arguments, its envelope parse of
// params, zod #5898): the method's schema then sees nothing extra, and the request was served where
// any other extra key is refused. Unknown is refused, not silently rewritten. The envelope parse runs
// inside the transports, so they check each raw message with protoKeyRefusal before it; the check
// here covers a transport that hands messages on as they are (in memory).
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { safeParse, type AnyObjectSchema } from '@modelcontextprotocol/sdk/server/zod-compat.js';
import { getMethodLiteral } from '@modelcontextprotocol/sdk/server/zod-json-schema-compat.js';
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ErrorCode,
  InitializeRequestSchema,
  isJSONRPCRequest,
  isTaskAugmentedRequestParams,
  McpError,
  PingRequestSchema,
  isJSONRPCResultResponse,
  type JSONRPCErrorResponse,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type MessageExtraInfo,
} from '@modelcontextprotocol/sdk/types.js';

/** The longest message of an invalid-params answer, in characters (a client's long key is cut). */
export const MAX_INVALID_PARAMS_MESSAGE = 200;
/** Problems named in one answer; the rest are counted. */
const NAMED_ISSUES = 3;

/** What a schema found wrong, as zod (v3 or v4) reports it. */
export interface ParamsIssue {
  readonly code: string;
  readonly path: readonly PropertyKey[];
  readonly message: string;
  readonly expected?: unknown;
}

/**
 * One line naming what is wrong, at most MAX_INVALID_PARAMS_MESSAGE characters:
 * `invalid params: name: expected string`. Paths are relative to `params`.
 */
export function invalidParamsMessage(issues: readonly ParamsIssue[]): string {
  const named = issues.slice(0, NAMED_ISSUES).map(describe);
  const more = issues.length > NAMED_ISSUES ? ` (and ${issues.length - NAMED_ISSUES} more)` : '';
  return bounded(`invalid params: ${named.length > 0 ? named.join('; ') : 'refused'}${more}`);
}

function describe(issue: ParamsIssue): string {
  const what = issue.code === 'invalid_type' && typeof issue.expected === 'string' ? `expected ${issue.expected}` : oneLine(issue.message);
  const where = pathOf(issue.path);
  return where === '' ? what : `${where}: ${what}`;
}

/** `name`, `arguments.query`, `items[0]`, `_meta["a key"]`; `params` itself when the whole of it is wrong. */
function pathOf(path: readonly PropertyKey[]): string {
  const segments = path[0] === 'params' && path.length > 1 ? path.slice(1) : path;
  let text = '';
  for (const segment of segments) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else if (typeof segment === 'string' && /^[A-Za-z_$][\w$]*$/.test(segment)) text += text === '' ? segment : `.${segment}`;
    else text += `[${JSON.stringify(String(segment))}]`;
  }
  return text;
}

/** Where the first own `__proto__` key in `value` is (its path, the key last), at any depth; undefined when there is none. */
function protoKeyPath(value: unknown): PropertyKey[] | undefined {
  // Iterative: a stdio message is bounded in bytes, not in depth. Each node links to its parent, so a path is built only for a hit.
  interface Node {
    readonly value: unknown;
    readonly key: PropertyKey;
    readonly parent: Node | undefined;
  }
  const stack: Node[] = [{ value, key: '', parent: undefined }];
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    const current = node.value;
    if (typeof current !== 'object' || current === null) continue;
    if (Object.hasOwn(current, '__proto__')) {
      const path: PropertyKey[] = ['__proto__'];
      for (let at: Node | undefined = node; at?.parent !== undefined; at = at.parent) path.unshift(at.key);
      return path;
    }
    if (Array.isArray(current)) for (let i = current.length - 1; i >= 0; i -= 1) stack.push({ value: current[i], key: i, parent: node });
    else for (const key of Object.keys(current).reverse()) stack.push({ value: (current as Record<string, unknown>)[key], key, parent: node });
  }
  return undefined;
}

/** What a request asked to run as a task is refused with: this server declares the tasks capability for no method. */
const NO_TASKS_ISSUE: ParamsIssue = { code: 'custom', path: ['params', 'task'], message: 'this server runs no request as a task' };

/** The problem of params that hold an own `__proto__` key, as one line; undefined for any other params. */
function protoKeyProblem(params: unknown): string | undefined {
  const path = protoKeyPath(params);
  return path && invalidParamsMessage([{ code: 'unrecognized_keys', path: ['params', ...path], message: 'key not allowed' }]);
}

/** An error answer to a request (whose id an error answer to an unreadable one lacks). */
type RequestErrorAnswer = JSONRPCErrorResponse & { id: JSONRPCRequest['id'] };

/** The -32602 answer to request `id`, worded as the SDK words every McpError it answers with (`MCP error -32602: …`). */
function invalidParamsAnswer(id: JSONRPCRequest['id'], problem: string): RequestErrorAnswer {
  const error = new McpError(ErrorCode.InvalidParams, problem);
  return { jsonrpc: '2.0', id, error: { code: error.code, message: error.message } };
}

/**
 * The -32602 answer to a raw message (as JSON.parse gave it, before the SDK's envelope parse) that
 * is a request whose params hold an own `__proto__` key; undefined for any other message.
 */
export function protoKeyRefusal(raw: unknown): RequestErrorAnswer | undefined {
  if (typeof raw !== 'object' || raw === null || !('method' in raw) || !('id' in raw) || !('params' in raw)) return undefined;
  const id = raw.id;
  if (typeof id !== 'string' && typeof id !== 'number') return undefined;
  const problem = protoKeyProblem(raw.params);
  return problem === undefined ? undefined : invalidParamsAnswer(id, problem);
}

/** What a message that is JSON but not a JSON-RPC request or notification is answered (-32600), on every transport. */
export const NOT_JSON_RPC_MESSAGE = 'Invalid Request: not a JSON-RPC 2.0 request or notification';

/** The id of a message that is not valid otherwise, when it is one JSON-RPC allows (a string or an integer): its -32600 goes under it. */
export function readableId(value: unknown): string | number | null {
  if (typeof value !== 'object' || value === null || !('id' in value)) return null;
  const id = value.id;
  return typeof id === 'string' || Number.isSafeInteger(id) ? (id as string | number) : null;
}

function oneLine(text: string): string {
  return text.replace(/[\s\p{Cc}]+/gu, ' ').trim();
}

const SDK_ERROR_PREFIX = `MCP error ${ErrorCode.InvalidParams}: `;

/** A text of the SDK's own tool errors as sent: one line of at most MAX_INVALID_PARAMS_MESSAGE characters after `MCP error -32602: `. */
function sdkToolErrorText(text: string): string {
  const line = oneLine(text);
  const prefix = line.startsWith(SDK_ERROR_PREFIX) ? SDK_ERROR_PREFIX : '';
  return `${prefix}${bounded(line.slice(prefix.length))}`;
}

function bounded(text: string): string {
  if (text.length <= MAX_INVALID_PARAMS_MESSAGE) return text;
  // Cut on a code point, never inside a surrogate pair.
  const cut = text.slice(0, MAX_INVALID_PARAMS_MESSAGE - 1);
  return `${/[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut}…`;
}

/**
 * From here on, records the schema of every request handler set on `server`, and connects it only
 * through a transport that answers -32602 to a request its method's schema refuses. Call it before
 * anything sets a handler.
 */
export function answerInvalidParams(server: Server): void {
  // Set by the SDK's constructors before this runs: ping (Protocol's, shared/protocol.js:33) and
  // initialize (Server's, server/index.js:52); with options capreg does not give (a task store,
  // the logging capability) also tasks/* and logging/setLevel, which would not be checked here.
  // A ping's params are the JSON-RPC envelope's, which the SDK checks before any handler.
  const schemas = new Map<string, AnyObjectSchema>([PingRequestSchema, InitializeRequestSchema].map((schema) => [getMethodLiteral(schema), schema]));
  const setRequestHandler = server.setRequestHandler.bind(server);
  server.setRequestHandler = (schema, handler) => {
    setRequestHandler(schema, handler);
    schemas.set(getMethodLiteral(schema), schema);
  };
  const removeRequestHandler = server.removeRequestHandler.bind(server);
  server.removeRequestHandler = (method) => {
    removeRequestHandler(method);
    schemas.delete(method);
  };
  const refusal = (request: JSONRPCRequest): string | undefined => {
    const protoKey = protoKeyProblem(request.params);
    if (protoKey !== undefined) return protoKey;
    const schema = schemas.get(request.method);
    if (schema === undefined) return undefined;
    // The SDK refuses a task-augmented request (MCP 2025-11-25) to a server that declares no tasks
    // with a plain Error, which it answers -32603 (Internal error): it is the caller's params.
    if (isTaskAugmentedRequestParams(request.params) && request.params.task !== undefined) return invalidParamsMessage([NO_TASKS_ISSUE]);
    const parsed = safeParse(schema, request);
    return parsed.success ? undefined : invalidParamsMessage((parsed.error as { issues: ParamsIssue[] }).issues);
  };
  const connect = server.connect.bind(server);
  server.connect = (transport) => connect(new ParamsCheckingTransport(transport, refusal));
}

/** `inner` as the server sees it, except that a request `refusal` names a problem in is answered -32602 here, and the SDK's own tool errors are cut short. */
class ParamsCheckingTransport implements Transport {
  onmessage?: Transport['onmessage'];

  constructor(
    private readonly inner: Transport,
    refusal: (request: JSONRPCRequest) => string | undefined,
  ) {
    // A callback set on `inner` before connect (the stdio transport counts requests so) still sees every message first.
    const observe = inner.onmessage;
    inner.onmessage = (message: JSONRPCMessage, extra?: MessageExtraInfo) => {
      observe?.(message, extra);
      const request = isJSONRPCRequest(message) ? message : undefined;
      const problem = request && refusal(request);
      if (request === undefined || problem === undefined) {
        this.onmessage?.(message, extra);
        return;
      }
      inner
        .send(invalidParamsAnswer(request.id, problem))
        .catch((failure: unknown) => this.onerror?.(new Error(`Failed to send an error response: ${String(failure)}`)));
    };
  }

  get onclose(): Transport['onclose'] {
    return this.inner.onclose;
  }
  set onclose(handler: Transport['onclose']) {
    this.inner.onclose = handler;
  }
  get onerror(): Transport['onerror'] {
    return this.inner.onerror;
  }
  set onerror(handler: Transport['onerror']) {
    this.inner.onerror = handler;
  }
  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion?.(version);
  }
  start(): Promise<void> {
    return this.inner.start();
  }
  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    // Only a tool result carries isError, so no other answer is touched (nor copied).
    const result = isJSONRPCResultResponse(message) ? boundedToolError(message.result) : undefined;
    return this.inner.send(result === undefined ? message : { ...message, result }, options);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

/** An SDK tool error (a result with isError and no structuredContent) with its text cut to one short line; undefined for any other result. */
function boundedToolError(result: Record<string, unknown>): Record<string, unknown> | undefined {
  if (result['isError'] !== true || result['structuredContent'] !== undefined || !Array.isArray(result['content'])) return undefined;
  const content = (result['content'] as unknown[]).map((block) =>
    typeof block === 'object' && block !== null && (block as { type?: unknown }).type === 'text' && typeof (block as { text?: unknown }).text === 'string'
      ? { ...block, text: sdkToolErrorText((block as { text: string }).text) }
      : block,
  );
  return { ...result, content };
}
