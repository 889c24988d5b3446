// The version gate (SPEC §5), pure: compare two parsed trees and judge the bumps (its output formats
// are in compiler/formatters/).
export { compareRegistries, idNotFolder, versionRange, GATE_MESSAGES, GATE_RULES } from './compare.js';
export type { CapabilityChange, ChangeKind, GateResult, Verdict, VersionFields } from './compare.js';
export type { GateReport, GateSummary } from './report.js';
export { compareRouting, routingChanged } from './routing.js';
export type { MovedRequest, RoutingResult, RoutingStatus, RoutingSummary } from './routing.js';
export { REASONS, requiredBump } from './required-bump.js';
export type { BumpReason, ReasonCode, RequiredBump } from './required-bump.js';
export { bumpVersion, formatVersion, isIsoDate, parseVersion, versionMove } from './semver.js';
export type { BumpLevel, Version, VersionMove } from './semver.js';
