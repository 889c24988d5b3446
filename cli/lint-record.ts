// The lint record: the report of the last `capreg lint`, kept in `.capreg/cache/lint.json` with a
// digest of everything that lint's compile took in. A lint that takes in the same prints that
// report again, without parsing or linting (a registry of 10,000 capabilities: the read and the
// digest instead of ~6 s).
//
// What the digest covers, and so what a lint's report can depend on:
// - capreg's code, the packages the compiler brings and Node's versions (pipelineFingerprint),
// - the configuration as resolved (every limit, every rule's level and options),
// - the registry as read: every text file by path and content, or by why it was refused; every
//   other path; the capability folders without a PROTOCOL.md.
// It is the digest of what the compile read, not of the disk read again: a file edited during a
// lint is never paired with a report made from its other content. A lint that stopped a protocol
// over `limits.maxParseMs` is not recorded, since that finding is of the run's timing, not of the
// files.
//
// The record is trusted as much as the folder it lives in (see build-cache.ts): what is checked is
// that it is a regular file under a size cap that begins with its key, nests no deeper than a
// report (parseRecord), and holds a report of the shape the formatters read.
import { createHash } from 'node:crypto';
import path from 'node:path';
import type { ResolvedConfig } from '../compiler/config.js';
import type { LintReport } from '../compiler/formatters/types.js';
import type { RegistryInput } from '../compiler/types.js';
import { removeStaleTemporaries, writeFileAtomic } from '../server/atomic-write.js';
import { isRecordedReport, MAX_RECORD_BYTES, parseRecord, readRegularFile } from './build-cache.js';
import { cacheFolder } from './cache-folder.js';
import { contentDigest } from './content-digests.js';
import { pipelineFingerprint } from './code-fingerprint.js';

const FORMAT = 1;

export function lintRecordFile(root: string): string {
  return path.join(cacheFolder(root), 'lint.json');
}

/** The digest of one compile's input: the configuration and the registry exactly as read. */
export function lintKey(config: ResolvedConfig, input: RegistryInput): string {
  const hash = createHash('sha256');
  const line = (value: unknown): void => {
    hash.update(`${JSON.stringify(value)}\n`);
  };
  line({ format: FORMAT, capreg: pipelineFingerprint() });
  const { rules, ...limits } = config;
  line({ limits: Object.entries(limits).sort(), rules: [...rules].sort(([a], [b]) => (a < b ? -1 : 1)) });
  for (const file of input.files) {
    const digest = file.content === undefined ? null : contentDigest(input, file.path, file.content);
    line([file.path, file.problem ?? null, file.problemAt ?? null, digest]);
  }
  line(input.allPaths);
  line(input.foldersWithoutProtocol);
  return hash.digest('hex');
}

/** How a record for `key` begins, as recordLint writes it: a record for another key is a miss unread. */
const recordStart = (key: string): string => `{"format":${FORMAT},"key":${JSON.stringify(key)},"report":`;

/** The report recorded for `key`, or undefined (no record, another key, or not one recordLint wrote). */
export function recordedLint(root: string, key: string): LintReport | undefined {
  const bytes = readRegularFile(lintRecordFile(root), MAX_RECORD_BYTES);
  const start = recordStart(key);
  if (bytes === undefined || bytes.toString('utf8', 0, start.length) !== start) return undefined;
  const record = parseRecord(bytes.toString('utf8'));
  if (typeof record !== 'object' || record === null) return undefined;
  // Checked again after the parse: a key written twice in the text parses as its last value.
  const { format, key: recordedKey, report } = record as Record<string, unknown>;
  return format === FORMAT && recordedKey === key && isRecordedReport(report) ? report : undefined;
}

/** Keep `report` as the lint of the input whose key is `key`. */
export async function recordLint(root: string, key: string, report: LintReport): Promise<void> {
  const { diagnostics, errorCount, warningCount } = report;
  const text = `${recordStart(key)}${JSON.stringify({ diagnostics, errorCount, warningCount })}}`;
  // What recordedLint would refuse is not written.
  if (text.length > MAX_RECORD_BYTES / 4 && Buffer.byteLength(text) > MAX_RECORD_BYTES) return;
  try {
    await removeStaleTemporaries([lintRecordFile(root)]);
    await writeFileAtomic(lintRecordFile(root), text, { sync: false });
  } catch {
    // A record that cannot be written only costs speed.
  }
}
