// The version gate (SPEC §5), pure: compare two parsed trees, judge the bumps, format the summary.
export { compareRegistries, versionRange, GATE_MESSAGES, GATE_RULES } from './compare.js';
export type { CapabilityChange, ChangeKind, GateResult, Verdict, VersionFields } from './compare.js';
export { formatGateJson } from './json.js';
export { formatGateMarkdown } from './markdown.js';
export type { GateReport, GateSummary } from './report.js';
export { REASONS, requiredBump } from './required-bump.js';
export type { BumpReason, ReasonCode, RequiredBump } from './required-bump.js';
export { bumpVersion, formatVersion, isIsoDate, parseVersion, versionMove } from './semver.js';
export type { BumpLevel, Version, VersionMove } from './semver.js';
