// Bounded reads (server/read-file.ts) measure their time limit on a monotonic clock.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_READ_LIMITS, readBounded } from '../../server/read-file.js';
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
