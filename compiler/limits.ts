// The `limits:` of capreg.config.yaml: their defaults and ceilings. Kept apart from config.ts,
// which loads the rules and ajv, so that the build cache's fast path can read the ceilings.

/**
 * Each limit is a whole number from 1 to its ceiling. A registry's own config may not lift a limit
 * past its ceiling: a pull request edits the config too, and the ceilings keep what it can make a
 * CI job read within what one process holds.
 */
export const LIMITS = {
  /** Bytes of one text input (PROTOCOL.md, toolsets or evals file); a larger file is refused unread. */
  maxFileBytes: { default: 1024 * 1024, ceiling: 64 * 1024 * 1024, unit: 'bytes' },
  /** Wall-clock time one PROTOCOL.md may take to parse (cli/parse-workers.ts). */
  maxParseMs: { default: 10_000, ceiling: 600_000, unit: 'milliseconds' },
  /** Files under capabilities/, of every kind (references too); past it, nothing is checked. */
  maxFiles: { default: 100_000, ceiling: 1_000_000, unit: 'files' },
  /**
   * Bytes of every text input together: what the compiler holds in memory, with the documents made
   * of it (a cold build of 10,000 generated capabilities, 50 MB of text, peaks at ~1.1 GB).
   */
  maxTotalBytes: { default: 128 * 1024 * 1024, ceiling: 1024 * 1024 * 1024, unit: 'bytes' },
} as const;

export type LimitName = keyof typeof LIMITS;

/** The limits a registry reader keeps to (cli/read-registry.ts, cli/git-registry.ts). */
export type ReadLimits = Record<'maxFileBytes' | 'maxFiles' | 'maxTotalBytes', number>;
