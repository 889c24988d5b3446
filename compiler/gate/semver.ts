// Versions and dates as the gate compares them: `protocol_version` is strict MAJOR.MINOR.PATCH
// (no pre-release, no build metadata, no ranges, no `latest`), `protocol_updated` an ISO date.

export type BumpLevel = 'patch' | 'minor' | 'major';

/** How a version moved between two trees. */
export type VersionMove = 'none' | BumpLevel | 'down';

export interface Version {
  major: number;
  minor: number;
  patch: number;
}

/**
 * MAJOR.MINOR.PATCH, each part at most 15 digits: every such number is exact in a JavaScript number
 * (2^53 has 16 digits), so the gate compares what lint accepted. The capability schema's
 * `protocol_version` pattern is this one (test/gate/semver.test.ts holds them equal).
 */
export const SEMVER = /^(0|[1-9]\d{0,14})\.(0|[1-9]\d{0,14})\.(0|[1-9]\d{0,14})$/;
const ISO_DATE = /^(\d{4})-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/;

export const BUMP_ORDER: Record<BumpLevel | 'none', number> = { none: 0, patch: 1, minor: 2, major: 3 };

export function parseVersion(text: string): Version | undefined {
  const match = SEMVER.exec(text);
  if (!match) return undefined;
  return { major: Number(match[1]), minor: Number(match[2]), patch: Number(match[3]) };
}

export function formatVersion(version: Version): string {
  return `${version.major}.${version.minor}.${version.patch}`;
}

/** The level of the first component that differs, or `down` when `to` is lower than `from`. */
export function versionMove(from: Version, to: Version): VersionMove {
  for (const level of ['major', 'minor', 'patch'] as const) {
    if (to[level] > from[level]) return level;
    if (to[level] < from[level]) return 'down';
  }
  return 'none';
}

/** The largest part SEMVER accepts (15 digits). */
const MAX_PART = 999_999_999_999_999;

/**
 * The smallest version SEMVER accepts that is at least a `level` bump of `from`: a part already at
 * its 15-digit maximum carries into the part above it (1.2.999999999999999 + patch is 1.3.0);
 * undefined when even the major part is at its maximum.
 */
export function bumpVersion(from: Version, level: BumpLevel): Version | undefined {
  if (level === 'patch' && from.patch < MAX_PART) return { ...from, patch: from.patch + 1 };
  if (level !== 'major' && from.minor < MAX_PART) return { major: from.major, minor: from.minor + 1, patch: 0 };
  if (from.major < MAX_PART) return { major: from.major + 1, minor: 0, patch: 0 };
  return undefined;
}

/** True for a real calendar date `YYYY-MM-DD` (2026-02-30 is not one). */
export function isIsoDate(text: string): boolean {
  const match = ISO_DATE.exec(text);
  if (!match) return false;
  const date = new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])));
  return date.getUTCDate() === Number(match[3]);
}
