// stdio: one MCP server for the whole session. The caller is whoever `CAPREG_API_KEY` names in the
// principals as they are at each call (the file is checked off the event loop before each batch of
// messages is handed on); when what that caller can see changes (manifest or principals reload),
// the client gets `notifications/resources/list_changed`.
import type { Readable, Writable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import {
  JSONRPCMessageSchema,
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import { isRecord } from '../../compiler/yaml-source.js';
import { principalCaller } from '../auth/api-key.js';
import { auditRecorder } from '../audit.js';
import { ANONYMOUS, type Caller } from '../identity.js';
import { sha256 } from '../principals.js';
import { createServer, MAX_MESSAGE_BYTES } from '../create-server.js';
import { NOT_JSON_RPC_MESSAGE, protoKeyRefusal, readableId } from '../invalid-params.js';
import type { ToolRegistrar } from '../tools/deps.js';
import { PRINCIPALS_UNCHECKED_MESSAGE, type Runtime } from '../runtime.js';

export interface StdioOptions {
  /** The API key of the session (from `CAPREG_API_KEY`); absent means unauthenticated. */
  apiKey?: string | undefined;
  stdin?: Readable;
  stdout?: Writable;
  extraRegistrars?: readonly ToolRegistrar[];
  log?: (line: string) => void;
}

export interface StdioSession {
  /** Resolves when the client goes away (stdin ends) or `close()` was called. */
  closed: Promise<void>;
  close(): Promise<void>;
}

export async function serveStdio(runtime: Runtime, options: StdioOptions = {}): Promise<StdioSession> {
  const log = options.log ?? (() => {});
  // Hash once; the lookup against the current principals still runs on every call.
  const keyDigest = options.apiKey ? sha256(options.apiKey) : undefined;
  const caller = (): Caller => {
    if (keyDigest === undefined) return ANONYMOUS;
    const principal = runtime.lastPrincipals().findByKeyDigest(keyDigest);
    return principal ? principalCaller(principal) : ANONYMOUS;
  };
  // Messages go on once the principals file has been checked (a revoked key fails on the very next
  // call), off the event loop: a file on a hung mount fails requests in 2 s rather than freezing.
  const principalsChecked =
    keyDigest !== undefined && runtime.principalsStore !== undefined ? async () => (await runtime.currentPrincipals()) !== undefined : undefined;
  if (keyDigest !== undefined && caller() === ANONYMOUS) {
    log('capreg serve: CAPREG_API_KEY is not a key in the principals file; the session is unauthenticated');
  }

  const { server, cleanup } = createServer({
    catalog: runtime.catalog,
    caller,
    // A key revoked while a call ran: the principals file is checked again, failing closed.
    callerChecked: async () => (principalsChecked === undefined || (await principalsChecked()) ? caller() : ANONYMOUS),
    names: runtime.names,
    userCapabilities: runtime.userCapabilities,
    metrics: runtime.metrics,
    audit: runtime.audit && auditRecorder(runtime.audit, caller, 'stdio'),
    notifiesResourceListChanged: true,
    ...(options.extraRegistrars ? { extraRegistrars: options.extraRegistrars } : {}),
  });

  let seen = runtime.catalog().visibleCapabilities(caller().grants).catalogVersion;
  const stopListening = runtime.onChange(() => {
    const now = runtime.catalog().visibleCapabilities(caller().grants).catalogVersion;
    if (now === seen) return;
    seen = now;
    if (server.isConnected()) {
      server.server.sendResourceListChanged().catch((error: unknown) => log(`capreg serve: list_changed not sent: ${(error as Error).message}`));
    }
  });

  const stdin = options.stdin ?? process.stdin;
  const stdout = options.stdout ?? process.stdout;
  const transport = new AnsweringStdioTransport(stdin, stdout, principalsChecked);
  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    // Deferred by a microtask so that `closing` is set before the server closes: closing the server
    // closes the transport, whose onclose comes back here (it used to recurse until the stack overflowed).
    closing ??= Promise.resolve().then(async () => {
      stopListening();
      stdin.off('end', onEnd);
      stdout.off('error', onOutputError);
      await cleanup().catch((error: unknown) => log(`capreg serve: closing the session failed: ${(error as Error).message}`));
      resolveClosed();
    });
    return closing;
  };
  // The client stopped writing: answer what it already asked (bounded), then end the session.
  const onEnd = (): void => void transport.answered(END_OF_INPUT_GRACE_MS).then(close);
  // The client stopped reading (EPIPE): nothing more can be answered.
  const onOutputError = (): void => void close();
  stdin.on('end', onEnd);
  stdout.on('error', onOutputError);
  transport.onclose = () => void close();
  // Said once per session (a flood of bad lines must not flood the log), and without echoing the
  // input, which is the client's and may hold anything.
  let reported = false;
  transport.onerror = () => {
    if (reported) return;
    reported = true;
    log(
      `capreg serve: unreadable input on stdin: a line that is not a JSON-RPC message, or one over ${MAX_MESSAGE_BYTES} bytes ` +
        '(which ends the session); further input errors are not logged',
    );
  };
  await server.connect(transport);
  return { closed, close };
}

/** How long a session whose input ended still waits for answers to requests already received. */
export const END_OF_INPUT_GRACE_MS = 5_000;

/**
 * Requests read and not yet answered at most (an answer counts once stdout has taken it): past it, or
 * while stdout holds more than its high-water mark, no more input is read. A client that writes
 * requests and never reads its answers would otherwise have every answer held in memory, often
 * thousands of times its request (and cancelling each request once answered must not get around it).
 */
export const MAX_UNANSWERED = 64;

/**
 * The SDK's stdio transport, also tracking which requests are still unanswered, reading no more
 * input while MAX_UNANSWERED of them are (or wait for the principals check) or stdout is full, and
 * answering lines it cannot take.
 */
class AnsweringStdioTransport extends StdioServerTransport {
  /** Unanswered requests by id, with how many were sent with that id. */
  private readonly unanswered = new Map<RequestId, number>();
  private unansweredCount = 0;
  private onAnswered: (() => void) | undefined;
  /** Set while stdout is over its high-water mark: resolves on its drain. */
  private draining: Promise<void> | undefined;
  private holding = false;
  private closed = false;
  /** Input read and not taken yet: the start of a line not yet ended by a newline, and lines held back. */
  private partial: Buffer | undefined;
  /** Set while takeLines runs (a line it passes on may let input go again, which would call it back). */
  private taking = false;
  /** Messages read, in order, waiting for the principals check before they go on to the server. */
  private readonly checking: JSONRPCMessage[] = [];
  /** Messages taken from `checking` for the check that runs now, not handed on yet. */
  private inCheck = 0;
  private pumping = false;

  /** `principalsChecked`: resolves true once the principals file has been checked, false when it could not be in time. */
  constructor(
    private readonly input: Readable,
    private readonly output: Writable,
    private readonly principalsChecked?: () => Promise<boolean>,
  ) {
    super(input, output, { maxBufferSize: MAX_MESSAGE_BYTES });
    // The SDK's reader throws on a line it cannot take and keeps nothing to answer with: read the
    // lines here instead (start() listens with this very function, close() removes it).
    this._ondata = (chunk: Buffer) => this.read(chunk);
    // Runs before the server's own handler (the SDK chains an onmessage set before connect).
    this.onmessage = (message) => {
      if (isJSONRPCRequest(message)) {
        this.unanswered.set(message.id, (this.unanswered.get(message.id) ?? 0) + 1);
        this.unansweredCount += 1;
        this.pauseOrResumeInput();
      } else if (isJSONRPCNotification(message) && message.method === 'notifications/cancelled') {
        // A cancelled request gets no answer.
        const requestId: unknown = message.params?.['requestId'];
        if (typeof requestId === 'string' || typeof requestId === 'number') this.settle(requestId);
      }
    };
  }

  // As the SDK's send, with one drain listener for all the answers waiting on it (not one each).
  override async send(message: JSONRPCMessage): Promise<void> {
    try {
      if (!this.output.write(serializeMessage(message))) {
        const drained = this.drained();
        this.pauseOrResumeInput();
        await drained;
      }
    } finally {
      if (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) {
        if (message.id !== undefined) this.settle(message.id);
      }
    }
  }

  override async close(): Promise<void> {
    this.closed = true;
    this.partial = undefined;
    await super.close();
  }

  /** Resolves once every request received so far has been answered, or after `timeoutMs`. */
  answered(timeoutMs: number): Promise<void> {
    if (this.idle()) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.onAnswered = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  /** Splits the input into lines; a line over MAX_MESSAGE_BYTES ends the session, as the SDK's does. */
  private read(chunk: Buffer): void {
    this.partial = this.partial ? Buffer.concat([this.partial, chunk]) : chunk;
    this.takeLines();
  }

  /**
   * Takes the lines read so far, one by one, until input is held: the rest wait in `partial` until
   * it is let go again (a pipe hands over up to 64 KiB at once, over a thousand small requests, and
   * pausing the input stops only the chunks after this one).
   */
  private takeLines(): void {
    if (this.taking || this.partial === undefined) return;
    this.taking = true;
    const buffer = this.partial;
    this.partial = undefined;
    let start = 0;
    try {
      for (let end = buffer.indexOf(NEWLINE); end !== -1 && !this.closed && !this.holding; end = buffer.indexOf(NEWLINE, start)) {
        // The message is bounded, not its line ending: CRLF takes no byte from it.
        const length = end - start - (end > start && buffer[end - 1] === CARRIAGE_RETURN ? 1 : 0);
        if (length > MAX_MESSAGE_BYTES) return this.overLimit();
        this.receive(buffer.toString('utf8', start, start + length));
        start = end + 1;
      }
      if (this.closed) return;
      const rest = buffer.subarray(start);
      // Only the start of a line (no newline in it yet, and not counting a CR that may yet end it) is
      // bounded here; lines held back are at most a chunk.
      const unended = rest.length - (rest.at(-1) === CARRIAGE_RETURN ? 1 : 0);
      if (unended > MAX_MESSAGE_BYTES && !rest.includes(NEWLINE)) return this.overLimit();
      if (rest.length > 0) this.partial = this.partial ? Buffer.concat([rest, this.partial]) : rest;
    } finally {
      this.taking = false;
    }
  }

  private overLimit(): void {
    this.onerror?.(new Error(`a message over ${MAX_MESSAGE_BYTES} bytes`));
    void this.close();
  }

  /**
   * One line: a JSON-RPC message goes on to the server. A line that is not JSON is answered with
   * -32700, and JSON that is not a JSON-RPC request or notification (a batch included) with -32600,
   * as JSON-RPC 2.0 says: with the request's id when it can be read, else `id: null`. Without an
   * answer, a client that sent such a line would wait for it forever. A blank line is skipped.
   */
  private receive(line: string): void {
    if (line.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      this.answerAtOnce(null, PARSE_ERROR, 'Parse error: the line is not JSON');
      this.onerror?.(new SyntaxError('a line that is not JSON'));
      return;
    }
    // Before the envelope parse, which drops a `__proto__` key at the top of params (server/invalid-params.ts).
    const refused = protoKeyRefusal(value);
    if (refused !== undefined) {
      this.answerAtOnce(refused.id, refused.error.code, refused.error.message);
      return;
    }
    const message = JSONRPCMessageSchema.safeParse(value);
    if (message.success) {
      this.handOn(message.data);
      return;
    }
    // A malformed answer to one of the server's own requests is not answered back.
    if (!isRecord(value) || 'method' in value || !('result' in value || 'error' in value)) {
      this.answerAtOnce(readableId(value), INVALID_REQUEST, `${NOT_JSON_RPC_MESSAGE} (send one message object per line; batches are not supported)`);
    }
    this.onerror?.(new Error('a line that is not a JSON-RPC message'));
  }

  /** To the server, at once or, with a principals check, after it (in order: a cancellation stays after its request). */
  private handOn(message: JSONRPCMessage): void {
    if (this.principalsChecked === undefined) {
      this.onmessage?.(message);
      return;
    }
    this.checking.push(message);
    this.pauseOrResumeInput();
    void this.pump(this.principalsChecked);
  }

  /**
   * Hands on the messages waiting, a batch per check: those that came during one check share the
   * next. When the file could not be checked in time, requests are answered with an error (neither
   * trusted nor refused on principals that may be stale) and notifications still go on.
   */
  private async pump(principalsChecked: () => Promise<boolean>): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (this.checking.length > 0 && !this.closed) {
        const batch = this.checking.splice(0);
        this.inCheck = batch.length;
        const checked = await principalsChecked().catch(() => false);
        for (const message of batch) {
          this.inCheck -= 1;
          if (this.closed) break;
          if (checked || !isJSONRPCRequest(message)) this.onmessage?.(message);
          else this.answerAtOnce(message.id, SERVER_ERROR, PRINCIPALS_UNCHECKED_MESSAGE);
        }
        this.inCheck = 0;
        this.pauseOrResumeInput();
        if (this.idle()) this.onAnswered?.();
      }
    } finally {
      this.pumping = false;
    }
  }

  /** Nothing received is waiting to be handed on or answered. */
  private idle(): boolean {
    return this.unansweredCount === 0 && this.checking.length === 0 && this.inCheck === 0;
  }

  /** Written at once; it counts as unanswered until stdout has taken it, so a flood of bad lines is held back like a flood of requests. */
  private answerAtOnce(id: RequestId | null, code: number, message: string): void {
    if (this.closed) return;
    this.unansweredCount += 1;
    const written = this.output.write(`${JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } })}\n`);
    const settled = written ? Promise.resolve() : this.drained();
    // Holds input at MAX_UNANSWERED, or at once while stdout is full.
    this.pauseOrResumeInput();
    void settled.then(() => this.settleOne());
  }

  private drained(): Promise<void> {
    this.draining ??= new Promise<void>((resolve) => {
      this.output.once('drain', () => {
        this.draining = undefined;
        this.pauseOrResumeInput();
        resolve();
      });
    });
    return this.draining;
  }

  private pauseOrResumeInput(): void {
    const hold = this.unansweredCount + this.checking.length + this.inCheck >= MAX_UNANSWERED || this.draining !== undefined;
    if (hold === this.holding) return;
    this.holding = hold;
    if (hold) this.input.pause();
    else if (!this.closed) {
      // Lines already read come first; they may hold input again.
      this.takeLines();
      if (!this.holding && !this.closed) this.input.resume();
    }
  }

  private settle(id: RequestId): void {
    const count = this.unanswered.get(id);
    if (count === undefined) return;
    if (count > 1) this.unanswered.set(id, count - 1);
    else this.unanswered.delete(id);
    this.settleOne();
  }

  private settleOne(): void {
    this.unansweredCount -= 1;
    this.pauseOrResumeInput();
    if (this.idle()) this.onAnswered?.();
  }
}

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const SERVER_ERROR = -32000;
