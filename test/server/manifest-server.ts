// A real local HTTP server (node:http on 127.0.0.1) that publishes a manifest and its signature
// the way a bucket or a CDN would: strong ETags, 304 for a matching If-None-Match, and switches for
// the ways a server misbehaves (5xx, a stall, redirects). It counts what it was asked.
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Published {
  manifest: string;
  signature?: string | undefined;
}

export interface ManifestServer {
  /** `…/manifest.json`; `…/hop/N/manifest.json` redirects N times before reaching it. */
  url: string;
  publish(next: Published): void;
  /** Answer every request with this status (e.g. 503) until set back to undefined. */
  failWith: number | undefined;
  /** Send headers, then never finish the body (a slow server) while true. */
  stall: boolean;
  /** Mixed into every ETag: a new value republishes the same bytes under new ETags (a rebuild). */
  etagSalt: string;
  /** Answer `/manifest.json` with a 302 to this location while set. */
  redirectTo: string | undefined;
  readonly counts: { ok: number; notModified: number; failed: number };
  close(): Promise<void>;
}

const etagOf = (text: string, salt: string): string => `"${createHash('sha256').update(salt).update(text).digest('hex').slice(0, 16)}"`;

export async function startManifestServer(initial: Published): Promise<ManifestServer> {
  let published = initial;
  const counts = { ok: 0, notModified: 0, failed: 0 };
  // The switches a test sets: the handle returned is this object, so the handler sees each change.
  const state: Pick<ManifestServer, 'failWith' | 'stall' | 'etagSalt' | 'redirectTo'> = {
    failWith: undefined,
    stall: false,
    etagSalt: '',
    redirectTo: undefined,
  };
  const server = http.createServer((request, response) => {
    // The query (a token, say) names the same file, as on a bucket.
    const url = (request.url ?? '/').split('?')[0]!;
    const hop = /^\/hop\/(\d+)(\/.*)$/.exec(url);
    if (hop) {
      const left = Number(hop[1]);
      response.writeHead(302, { location: left > 1 ? `/hop/${left - 1}${hop[2]}` : hop[2] }).end();
      return;
    }
    if (state.redirectTo !== undefined && url === '/manifest.json') {
      response.writeHead(302, { location: state.redirectTo }).end();
      return;
    }
    if (state.failWith !== undefined) {
      counts.failed += 1;
      response.writeHead(state.failWith).end('down');
      return;
    }
    const body = url === '/manifest.json' ? published.manifest : url === '/manifest.json.sig' ? published.signature : undefined;
    if (body === undefined) {
      response.writeHead(404).end();
      return;
    }
    if (state.stall) {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write(body.slice(0, 10));
      return; // never ends: the client's time limit must
    }
    const etag = etagOf(body, state.etagSalt);
    if (request.headers['if-none-match'] === etag) {
      counts.notModified += 1;
      response.writeHead(304, { etag }).end();
      return;
    }
    if (url === '/manifest.json') counts.ok += 1;
    response.writeHead(200, { 'content-type': 'application/json', etag }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}/manifest.json`,
    publish: (next: Published) => {
      published = next;
    },
    counts,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}
