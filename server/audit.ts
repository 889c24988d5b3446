// The audit log (docs/server.md, "Metrics and logs"): one record for every protocol handed out or
// refused, answering "which version of which protocol did this caller load, and when". Records
// hold identifiers only: never a credential, never protocol text. No MCP SDK code here.
import fs from 'node:fs';
import type { Caller, CallerResolver } from './identity.js';

/** What a tool, resource or skills method reports when it hands a protocol out (or refuses to). */
export interface Handout {
  /** What was called: the tool name, `resources/read`, or a skills method. */
  via: string;
  /** The id as the caller asked for it (bounded in the record). */
  capabilityId: string;
  /** `uniform-error` is the one answer for unknown and forbidden ids; `failed` a store that did not answer. */
  outcome: 'served' | 'uniform-error' | 'failed';
  /** The manifest revision the answer came from. */
  revision: string;
  protocolVersion?: string | undefined;
  digest?: string | undefined;
}

export type Transport = 'stdio' | 'http';

export interface AuditRecord {
  time: string;
  /** The namespaced owner (`key:<id>`, `jwt:<issuer>#<sub>`), or null for an unauthenticated session. */
  principal: string | null;
  via: string;
  capabilityId: string;
  protocolVersion: string | null;
  digest: string | null;
  revision: string;
  transport: Transport;
  outcome: Handout['outcome'];
}

/** Where complete records go (the audit file); the server builds one recorder per session or request. */
export type AuditSink = (record: AuditRecord) => void;
/** The function tools call (ToolDeps.audit). */
export type AuditRecorder = (handout: Handout) => void;

/** Ids are short; a caller may send anything (1 MB of text), which the log must not copy. */
export const MAX_AUDITED_ID_LENGTH = 256;

/**
 * What the caller asked for, as the record holds it: a string as is (cut by the recorder), anything
 * else by its JSON type only (`<array>`, `<missing>`), never serialized: a caller may send a value
 * nested so deep that serializing it overflows the stack.
 */
export function askedFor(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return '<missing>';
  return `<${value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value}>`;
}

export function principalOf(caller: Caller): string | null {
  return caller.authenticated ? caller.owner : null;
}

export function auditRecorder(sink: AuditSink, caller: CallerResolver, transport: Transport): AuditRecorder {
  return (handout) =>
    sink({
      time: new Date().toISOString(),
      principal: principalOf(caller()),
      via: handout.via,
      capabilityId: handout.capabilityId.length > MAX_AUDITED_ID_LENGTH ? `${handout.capabilityId.slice(0, MAX_AUDITED_ID_LENGTH)}…` : handout.capabilityId,
      protocolVersion: handout.protocolVersion ?? null,
      digest: handout.digest ?? null,
      revision: handout.revision,
      transport,
      outcome: handout.outcome,
    });
}

export interface AuditLog {
  sink: AuditSink;
  /** Writes what is pending, then closes the file. */
  close(): Promise<void>;
}

/** Records waiting for the disk at most; past it records are dropped (and that is reported), never queued without bound. */
export const MAX_PENDING_AUDIT_BYTES = 16 * 1024 * 1024;

/**
 * How the audit file is opened: for appending, created 0600, and without blocking. A FIFO at the
 * path that nothing reads would block a plain open (which runs on the event loop) until a reader
 * came: no request, no `/healthz` and no SIGTERM would be answered meanwhile. Non-blocking, that
 * open fails at once with ENXIO; on a regular file or a device the flag changes nothing.
 */
const OPEN_FLAGS = fs.constants.O_WRONLY | fs.constants.O_APPEND | fs.constants.O_CREAT | fs.constants.O_NONBLOCK | fs.constants.O_NOCTTY;
/** A pipe with a reader that is full answers EAGAIN: wait this long between tries, and give up after WRITE_AGAIN_LIMIT_MS. */
const WRITE_AGAIN_MS = 10;
const WRITE_AGAIN_LIMIT_MS = 5_000;

const openForAppend = (file: string): number => fs.openSync(file, OPEN_FLAGS, 0o600);

/**
 * Opens FILE for appending (O_APPEND, created 0600) and writes one JSON record per line, in
 * order, off the request path. A file moved away (log rotation) or deleted is followed: the next
 * records go to a new file at the path, and that is reported at `info`. A failed write is reported
 * through `report` and the server goes on; each kind of failure is reported once until a write
 * succeeds again. Throws when the file cannot be opened, a FIFO that nothing reads included (the
 * caller refuses to start).
 */
export function openAuditLog(file: string, report: (message: string, level?: 'info' | 'error') => void): AuditLog {
  let fd = openForAppend(file);
  let pending: string[] = [];
  let pendingBytes = 0;
  let writing: Promise<void> | undefined;
  let reported: string | undefined;
  let closed = false;

  const problem = (message: string): void => {
    if (reported === message) return;
    reported = message;
    report(`capreg serve: audit log ${file}: ${message}; the server keeps serving`);
  };

  // The path must still name the open file: records written to a file moved away or deleted would
  // go where nobody reads them (or nowhere, once the rotated file is removed).
  const follow = (): void => {
    const now = fs.statSync(file, { throwIfNoEntry: false });
    const open = fs.fstatSync(fd);
    if (now !== undefined && now.dev === open.dev && now.ino === open.ino) return;
    const next = openForAppend(file);
    fs.closeSync(fd);
    fd = next;
    report(`capreg serve: audit log ${file}: the file was moved away or deleted; records now go to a new file at that path`, 'info');
  };

  const flush = async (): Promise<void> => {
    while (pending.length > 0) {
      const chunk = pending.join('');
      pending = [];
      pendingBytes = 0;
      try {
        follow();
        await writeAll(fd, Buffer.from(chunk, 'utf8'));
        reported = undefined;
      } catch (error) {
        problem(`write failed (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}), records lost`);
      }
    }
    writing = undefined;
  };

  return {
    sink: (record) => {
      if (closed) return;
      const line = `${JSON.stringify(record)}\n`;
      if (pendingBytes + line.length > MAX_PENDING_AUDIT_BYTES) {
        problem(`over ${MAX_PENDING_AUDIT_BYTES} bytes waiting for the disk, records dropped`);
        return;
      }
      pending.push(line);
      pendingBytes += line.length;
      writing ??= flush();
    },
    close: async () => {
      closed = true;
      await writing;
      fs.closeSync(fd);
    },
  };
}

async function writeAll(fd: number, buffer: Buffer): Promise<void> {
  let offset = 0;
  let waitedMs = 0;
  while (offset < buffer.length) {
    try {
      const { bytesWritten } = await new Promise<{ bytesWritten: number }>((resolve, reject) =>
        fs.write(fd, buffer, offset, buffer.length - offset, null, (error, written) => (error ? reject(error) : resolve({ bytesWritten: written }))),
      );
      offset += bytesWritten;
      waitedMs = 0;
    } catch (error) {
      // The file is opened non-blocking (OPEN_FLAGS): a full pipe says so instead of waiting.
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN' || waitedMs >= WRITE_AGAIN_LIMIT_MS) throw error;
      await new Promise((resolve) => setTimeout(resolve, WRITE_AGAIN_MS));
      waitedMs += WRITE_AGAIN_MS;
    }
  }
}
