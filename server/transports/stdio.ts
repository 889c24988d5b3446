// stdio: one MCP server for the whole session. The caller is whoever `CAPREG_API_KEY` names in the
// principals as they are at each call; when what that caller can see changes (manifest or
// principals reload), the client gets `notifications/resources/list_changed`.
import type { Readable, Writable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { principalCaller } from '../auth/api-key.js';
import { ANONYMOUS, type Caller } from '../identity.js';
import { sha256 } from '../principals.js';
import { createServer } from '../create-server.js';
import type { ToolRegistrar } from '../tools/deps.js';
import type { Runtime } from '../runtime.js';

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
    const principal = runtime.principals().findByKeyDigest(keyDigest);
    return principal ? principalCaller(principal) : ANONYMOUS;
  };
  if (keyDigest !== undefined && caller() === ANONYMOUS) {
    log('capreg serve: CAPREG_API_KEY is not a key in the principals file; the session is unauthenticated');
  }

  const { server, cleanup } = createServer({
    catalog: runtime.catalog,
    caller,
    names: runtime.names,
    userCapabilities: runtime.userCapabilities,
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
  const transport = new StdioServerTransport(stdin, options.stdout ?? process.stdout);
  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      stopListening();
      stdin.off('end', onEnd);
      await cleanup();
      resolveClosed();
    })();
    return closing;
  };
  const onEnd = (): void => void close();
  stdin.on('end', onEnd);
  transport.onclose = () => void close();
  await server.connect(transport);
  return { closed, close };
}
