// Bounded reads (server/read-file.ts) measure their time limit on a monotonic clock.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_READ_LIMITS, FIRST_RETRY_WAIT_MS, MAX_RETRY_WAIT_MS, readBounded, statIdentity, TimeoutRetry } from '../../server/read-file.js';
import { tempDir } from './helpers.js';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('readBounded', () => {
  it('does not take a wall clock stepped forward during a read (NTP, a VM resumed) for a read that took too long', async () => {
    const file = path.join(tempDir(), 'manifest.json');
    // Several chunks, so the time limit is checked between reads.
    fs.writeFileSync(file, 'x'.repeat(3 * 1024 * 1024));
    const wallClock = Date.now.bind(Date);
    let calls = 0;
    vi.spyOn(Date, 'now').mockImplementation(() => wallClock() + (calls++ > 0 ? 3_600_000 : 0));
    const read = await readBounded(file, DEFAULT_READ_LIMITS);
    expect(read).toMatchObject({ ok: true });
  });
});

describe('statIdentity', () => {
  it('changes when only the permissions do, so that a file that could not be opened is tried again once fixed', async () => {
    const file = path.join(tempDir(), 'principals.yaml');
    fs.writeFileSync(file, 'principals: []\n');
    fs.chmodSync(file, 0o000);
    const before = await statIdentity(file);
    // ctime has a clock tick of resolution on some file systems.
    await new Promise((resolve) => setTimeout(resolve, 20));
    fs.chmodSync(file, 0o644);
    expect(await statIdentity(file)).not.toBe(before);
    expect(await readBounded(file, DEFAULT_READ_LIMITS)).toMatchObject({ ok: true, identity: await statIdentity(file) });
  });
});

describe('TimeoutRetry', () => {
  it('is due a second after a timeout, then after twice as long at each timeout in a row (at most a minute), and not after a read that finished', () => {
    let now = 0;
    const retry = new TimeoutRetry(() => now);
    const files = ['/nowhere/manifest.json'];
    expect(retry.due(files)).toBe(false);
    const waits: number[] = [];
    for (let timeouts = 0; timeouts < 9; timeouts += 1) {
      retry.record(true);
      const from = now;
      while (!retry.due(files)) now += 250;
      waits.push(now - from);
    }
    expect(waits).toEqual([1, 2, 4, 8, 16, 32, 60, 60, 60].map((seconds) => seconds * FIRST_RETRY_WAIT_MS));
    expect(MAX_RETRY_WAIT_MS).toBe(60 * FIRST_RETRY_WAIT_MS);
    // A read that finished (refused or not for another reason) ends the retries, and the next timeout waits a second again.
    retry.record(false);
    expect(retry.due(files)).toBe(false);
    retry.record(true);
    now += FIRST_RETRY_WAIT_MS;
    expect(retry.due(files)).toBe(true);
  });
});
