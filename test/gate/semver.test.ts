import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { bumpVersion, compareRegistries, formatVersion, isIsoDate, parseVersion, versionMove } from '../../compiler/gate/index.js';
import { parseCapability } from '../../compiler/parse.js';
import type { CapabilityDocument } from '../../compiler/types.js';
import { REPORTS, REPORTS_FILE } from './fixture.js';
import { SEMVER } from '../../compiler/gate/semver.js';

describe('versions', () => {
  it("are the capability schema's protocol_version: lint accepts exactly what the gate can compare", () => {
    const schema = JSON.parse(readFileSync(new URL('../../compiler/schema/capability.schema.json', import.meta.url), 'utf8')) as {
      properties: { protocol_version: { pattern: string } };
    };
    expect(schema.properties.protocol_version.pattern).toBe(SEMVER.source);
  });
  it.each(['1.2.3', '0.0.0', '10.20.30', '999999999999999.0.0'])('accepts %s', (text) => expect(parseVersion(text)).toBeDefined());
  it.each([
    '1.2',
    'v1.2.3',
    '01.2.3',
    '1.2.3-beta.1',
    '1.2.3+build',
    '^1.2.3',
    'latest',
    '1.2.3 ',
    '99999999999999999999.0.0',
    '9007199254740993.0.0',
    '1.1000000000000000.0',
  ])('refuses %s', (text) => expect(parseVersion(text)).toBeUndefined());
  it.each([
    ['1.2.3', '1.2.4', 'patch'],
    ['1.2.3', '1.3.0', 'minor'],
    ['1.2.3', '1.3.7', 'minor'],
    ['1.2.3', '2.0.0', 'major'],
    ['1.2.3', '1.2.3', 'none'],
    ['1.2.3', '1.2.2', 'down'],
    ['1.2.3', '0.9.9', 'down'],
    ['1.9.0', '1.10.0', 'minor'],
  ])('%s → %s is %s', (from, to, move) => expect(versionMove(parseVersion(from)!, parseVersion(to)!)).toBe(move));
  it('suggests the smallest version of a level', () => {
    const from = parseVersion('1.2.3')!;
    expect([bumpVersion(from, 'patch'), bumpVersion(from, 'minor'), bumpVersion(from, 'major')]).toEqual([
      { major: 1, minor: 2, patch: 4 },
      { major: 1, minor: 3, patch: 0 },
      { major: 2, minor: 0, patch: 0 },
    ]);
  });
  it('never suggests a version lint refuses: a part at its 15-digit maximum carries into the part above', () => {
    const max = '999999999999999';
    const bumped = (version: string, level: 'patch' | 'minor' | 'major'): string | undefined => {
      const next = bumpVersion(parseVersion(version)!, level);
      return next && formatVersion(next);
    };
    expect(bumped(`1.2.${max}`, 'patch')).toBe('1.3.0');
    expect(bumped(`1.${max}.${max}`, 'patch')).toBe('2.0.0');
    expect(bumped(`1.${max}.0`, 'minor')).toBe('2.0.0');
    expect(bumped(`${max}.${max}.${max}`, 'patch')).toBeUndefined();
    expect(bumped(`${max}.0.0`, 'major')).toBeUndefined();
    expect(bumped(`${max}.0.0`, 'minor')).toBe(`${max}.1.0`);
    for (const version of [`1.2.${max}`, `1.${max}.${max}`, `1.${max}.0`, `${max}.0.0`]) {
      for (const level of ['patch', 'minor', 'major'] as const) {
        const next = bumped(version, level);
        if (next !== undefined) expect(parseVersion(next), `${version} + ${level}`).toBeDefined();
      }
    }
  });
  it('knows real calendar dates', () => {
    expect(['2026-01-10', '2024-02-29'].map(isIsoDate)).toEqual([true, true]);
    expect(['2026-02-30', '2025-02-29', '2026-1-10', '10/01/2026'].map(isIsoDate)).toEqual([false, false, false, false]);
  });
});

describe('the gate at the 15-digit maxima', () => {
  const max = '999999999999999';
  const parsed = (version: string, text = REPORTS, updated = '2026-01-10'): CapabilityDocument =>
    parseCapability(
      REPORTS_FILE,
      text.replace('protocol_version: 1.2.3', `protocol_version: ${version}`).replace('protocol_updated: 2026-01-10', `protocol_updated: ${updated}`),
    );
  const needs = {
    patch: (text: string) => text.replace('exactly as returned', 'exactly as it was returned'),
    major: (text: string) => text.replace('[work-logs]', '[work-logs, billing]'),
  };
  const messages = (from: string, to: string, level: keyof typeof needs): string[] =>
    compareRegistries([parsed(from)], [parsed(to, needs[level](REPORTS), '2026-02-01')]).diagnostics.map((diagnostic) => diagnostic.message);

  it('suggests the carried version, and says so when no bump fits', () => {
    expect(messages(`1.2.${max}`, `1.2.${max}`, 'patch')).toEqual([expect.stringMatching(/\(expected 1\.3\.0 or higher\)$/)]);
    // MAX.1.0 is above MAX.0.0 and lint accepts it, but it is not the major bump the change needs.
    for (const to of [`${max}.0.0`, `${max}.1.0`]) {
      expect(messages(`${max}.0.0`, to, 'major')).toEqual([
        expect.stringMatching(new RegExp(`\\(expected a major bump of ${max}\\.0\\.0, and none fits in 15 digits per part\\)$`)),
      ]);
    }
  });
});
