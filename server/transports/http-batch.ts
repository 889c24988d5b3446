// A JSON-RPC batch over HTTP: up to 100 calls in one `POST /mcp` (MCP 2025-03-26 has batches,
// 2025-06-18 removed them, stdio refuses them), and one of its caller's turns. The SDK's transport
// (JSON-response mode) hands every message of a batch to the server in one loop; each handler runs
// in microtasks, with no turn of the event loop between them, and every answer is kept until the
// last one has come, to be serialized together. Measured on a 3,000-capability registry with a
// catalog budget of 600,000 tokens: a batch of 100 `list_capabilities` was a 386 MB answer, held
// `/healthz` for 4.3 s and took the process to ~1 GB; other requests got 503 as the principals
// check's timer fired late.
//
// So a batch's requests are handed on one at a time: the next once the one before has been
// answered and the event loop has turned, so that other requests and `/healthz` are served between
// two calls. And the answers are counted as the SDK will serialize them (jsonBytes walks them
// instead of serializing them a second time): once they pass the limit, the batch's remaining
// requests are answered with an error that says so and are not run. A body of one message (every
// request of MCP 2025-06-18) goes to the SDK's transport without this.
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type MessageExtraInfo,
} from '@modelcontextprotocol/sdk/types.js';
import { MAX_MESSAGE_BYTES } from '../create-server.js';

/**
 * The answers to one batch, in bytes of JSON, past which its remaining calls are not run: 4 times
 * the largest request. The SDK serializes them all at once, in one stretch of the event loop, which
 * at this size is about one large call's own (docs/server.md, Slow and numerous clients); the
 * answers kept for one request pass it by at most one answer.
 */
export const MAX_BATCH_ANSWER_BYTES = 4 * MAX_MESSAGE_BYTES;
/** JSON-RPC's code for an error of the server's own (as the 429 and the principals check use). */
const SERVER_ERROR = -32000;

/** What a call of a batch is answered once the answers before it passed `limit` bytes. */
export function batchLimitMessage(limit: number): string {
  return `Batch answer limit: the calls before this one in the batch were answered with more than ${limit} bytes, the most for one HTTP request; send this call in another request`;
}

/**
 * `batch` without the requests that a `notifications/cancelled` in it names. JSON-RPC answers no
 * cancelled request, and the SDK's transport answers a batch only once it has an answer for every
 * request in it: a cancel handed to the server just before its call aborted the call, which then
 * had no answer, and the batch waited for `--request-timeout`, its other calls not run. A cancelled
 * call is not run at all, wherever the cancel stands in the batch; the cancels themselves go on.
 */
export function withoutCancelledCalls(batch: readonly unknown[]): unknown[] {
  const cancelled = new Set<unknown>();
  for (const message of batch) {
    if (isJSONRPCNotification(message) && message.method === 'notifications/cancelled') {
      const requestId = message.params?.['requestId'];
      if (typeof requestId === 'string' || typeof requestId === 'number') cancelled.add(requestId);
    }
  }
  return cancelled.size === 0 ? [...batch] : batch.filter((message) => !(isJSONRPCRequest(message) && cancelled.has(message.id)));
}

/**
 * Why `batch` is refused when two of its requests share an id: the SDK keys its answers by id, so
 * the later call's answer took the earlier one's place and the caller got one answer for two calls.
 * Names the places (1-based), never the id, which the caller wrote.
 */
export function sharedIdProblem(batch: readonly unknown[]): string | undefined {
  const placeOf = new Map<unknown, number>();
  for (const [index, message] of batch.entries()) {
    if (!isJSONRPCRequest(message)) continue;
    const first = placeOf.get(message.id);
    if (first !== undefined) {
      return `Invalid Request: messages ${first + 1} and ${index + 1} of the batch are requests with the same id; give each request of a batch its own id`;
    }
    placeOf.set(message.id, index);
  }
  return undefined;
}

/** `inner` as the server sees it, except that a batch's requests reach the server one at a time, and not past the limit of answer bytes. */
export class PacedBatchTransport implements Transport {
  onmessage?: Transport['onmessage'];
  readonly #inner: Transport;
  readonly #limit: number;
  readonly #waiting: [JSONRPCMessage, MessageExtraInfo | undefined][] = [];
  /** The request handed on and not answered yet. */
  #inFlight: JSONRPCRequest['id'] | undefined;
  #answeredBytes = 0;
  #closed = false;

  constructor(inner: Transport, limit: number) {
    this.#inner = inner;
    this.#limit = limit;
    inner.onmessage = (message, extra) => {
      this.#waiting.push([message, extra]);
      this.#next();
    };
  }

  /** Hands on what waits, in order, up to and including the next request to run (notifications and answers go on at once). */
  #next(): void {
    while (!this.#closed && this.#inFlight === undefined) {
      const [message, extra] = this.#waiting.shift() ?? [];
      if (message === undefined) return;
      if (!isJSONRPCRequest(message)) this.onmessage?.(message, extra);
      else if (this.#answeredBytes > this.#limit) {
        const error = { code: SERVER_ERROR, message: batchLimitMessage(this.#limit) };
        this.#inner.send({ jsonrpc: '2.0', id: message.id, error }).catch((failure: unknown) => this.onerror?.(failure as Error));
      } else {
        this.#inFlight = message.id;
        this.onmessage?.(message, extra);
      }
    }
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if ((isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) && this.#inFlight !== undefined && message.id === this.#inFlight) {
      this.#answeredBytes += jsonBytes(message);
      this.#inFlight = undefined;
      // The next call on a later turn of the event loop: I/O waiting meanwhile is served first.
      setImmediate(() => this.#next());
    }
    return this.#inner.send(message, options);
  }

  close(): Promise<void> {
    // A client gone (or a server closing) runs nothing more of the batch.
    this.#closed = true;
    this.#waiting.length = 0;
    return this.#inner.close();
  }

  get onclose(): Transport['onclose'] {
    return this.#inner.onclose;
  }
  set onclose(handler: Transport['onclose']) {
    this.#inner.onclose = handler;
  }
  get onerror(): Transport['onerror'] {
    return this.#inner.onerror;
  }
  set onerror(handler: Transport['onerror']) {
    this.#inner.onerror = handler;
  }
  get sessionId(): string | undefined {
    return this.#inner.sessionId;
  }
  setProtocolVersion(version: string): void {
    this.#inner.setProtocolVersion?.(version);
  }
  start(): Promise<void> {
    return this.#inner.start();
  }
}

/**
 * `Buffer.byteLength(JSON.stringify(value))`, without building the string: the strings of an answer
 * are measured where they are (a listing's text is megabytes). For the JSON values answers are made
 * of; a `toJSON` is followed.
 */
export function jsonBytes(value: unknown): number {
  if (value === null) return 4;
  switch (typeof value) {
    case 'string':
      return stringBytes(value);
    case 'number':
      return Number.isFinite(value) ? String(value).length : 4;
    case 'boolean':
      return value ? 4 : 5;
    case 'object':
      break;
    default:
      // undefined, a function or a symbol: left out of an object (below), null in an array.
      return 4;
  }
  const toJSON = (value as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === 'function') return jsonBytes((toJSON as () => unknown).call(value));
  if (Array.isArray(value)) {
    let bytes = 2 + Math.max(0, value.length - 1);
    for (const item of value as unknown[]) bytes += jsonBytes(item);
    return bytes;
  }
  let bytes = 2;
  let members = 0;
  for (const [key, member] of Object.entries(value as Record<string, unknown>)) {
    if (member === undefined || typeof member === 'function' || typeof member === 'symbol') continue;
    bytes += stringBytes(key) + 1 + jsonBytes(member);
    members += 1;
  }
  return bytes + Math.max(0, members - 1);
}

/** A string as JSON: its UTF-8 bytes, the quotes, and what escaping adds. */
function stringBytes(text: string): number {
  let extra = 0;
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (code === 0x22 || code === 0x5c) extra += 1;
    else if (code < 0x20) extra += code === 0x08 || code === 0x09 || code === 0x0a || code === 0x0c || code === 0x0d ? 1 : 5;
    else if (code >= 0xd800 && code <= 0xdfff) {
      const next = text.charCodeAt(i + 1);
      // A pair is 4 bytes either way; a lone surrogate is `\udxxx` (6), where byteLength counts 3.
      if (code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) i += 1;
      else extra += 3;
    }
  }
  return Buffer.byteLength(text, 'utf8') + 2 + extra;
}
