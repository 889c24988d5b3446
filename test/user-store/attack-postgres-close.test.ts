// close() of a PostgreSQL store whose database went silent (a partition, a host gone: TCP accepts,
// nothing answers). pool.end() waited for every connection still being opened to hit the 5 s connect
// timeout, so a replica took that long to shut down; close() now cuts those connections.
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { PostgresUserStore } from '../../server/user-store/postgres.js';
import { isUserStoreError } from '../../server/user-store/store.js';

describe('PostgreSQL store: close() with connections still opening', () => {
  let server: net.Server | undefined;
  const sockets: net.Socket[] = [];
  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.destroy();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  });

  async function silentDatabase(): Promise<string> {
    server = net.createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    return `postgres://capreg:secret@127.0.0.1:${(server.address() as net.AddressInfo).port}/capreg`;
  }

  it('returns at once, and the call that was connecting fails as store-unavailable', async () => {
    const store = new PostgresUserStore(await silentDatabase(), { healthCheckMs: 0 });
    const calls = [store.listSummariesByOwner('key:alice'), store.get('user:aaaaaaaaaaaaaaaa'), store.countByOwner('key:bob')].map((call) =>
      call.then(
        () => 'answered',
        (error: unknown) => error,
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(sockets.length).toBeGreaterThan(0);
    const started = performance.now();
    await store.close();
    expect(performance.now() - started).toBeLessThan(1_000);
    for (const outcome of await Promise.all(calls)) {
      expect(isUserStoreError(outcome, 'store-unavailable')).toBe(true);
      expect(String((outcome as Error).message)).not.toContain('secret');
    }
  });

  it("returns at once while the idle store's own health check is connecting", async () => {
    const store = new PostgresUserStore(await silentDatabase(), { healthCheckMs: 50 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(sockets.length).toBeGreaterThan(0);
    const started = performance.now();
    await store.close();
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});
