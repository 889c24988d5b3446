// PostgreSQL for the test suites: `.ci/postgres.sh` starts one and prints CAPREG_TEST_PG_URL.
// Without it the PostgreSQL suites are skipped locally, and fail in CI (CI must run them).
import net from 'node:net';
import { describe, it } from 'vitest';

export const TEST_PG_URL = process.env.CAPREG_TEST_PG_URL;
const HOW = 'start one with: pg_env=$(bash .ci/postgres.sh) && eval "$pg_env"';
const inCI = !['', '0', 'false'].includes((process.env.CI ?? '').toLowerCase());

/** Call when TEST_PG_URL is unset: a failing test in CI, a visible skip elsewhere. */
export function describeMissingPostgres(title: string, file: string): void {
  if (inCI) {
    describe(title, () => {
      it('runs in CI', () => {
        throw new Error(`CAPREG_TEST_PG_URL is not set, and CI must run the PostgreSQL tests: ${HOW}`);
      });
    });
    return;
  }
  process.stderr.write(`${file}: skipping the PostgreSQL tests: CAPREG_TEST_PG_URL is not set (${HOW})\n`);
  describe.skip(`${title} (skipped: CAPREG_TEST_PG_URL is not set; ${HOW})`, () => {
    it('needs a database', () => {});
  });
}

/** A port on the loopback interface where nothing listens. */
export async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
