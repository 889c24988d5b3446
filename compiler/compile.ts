// The pipeline, in the order the data flows: parse -> validate + lint (rules) -> emit.
// Pure over in-memory files: the CLI reads the registry from disk or Git and hands it in here.
import { defaultConfig, type ResolvedConfig } from './config.js';
import { isProtocolFile } from './layout.js';
import { createLintRegistry, runRules } from './lint.js';
import { buildManifest, type ManifestOptions } from './manifest.js';
import { parseCapability } from './parse.js';
import type { AnyRule, LintRegistry } from './rule.js';
import { sharedWithinCompile, type Derived } from './derived.js';
import { rules as allRules } from './rules/index.js';
import { isComparedBlocksKey } from './rules/duplicate-content.js';
import { parseEvalsFiles, type ParsedEvals } from './evals/file.js';
import { toolsetsSourceOf, type ParsedToolsets } from './toolsets.js';
import type { CapabilityDocument, Diagnostic, Manifest, RegistryInput, SourceFile } from './types.js';

export interface CompileResult {
  diagnostics: Diagnostic[];
  registry: LintRegistry;
  errorCount: number;
  warningCount: number;
  /** The settings the rules ran with (the manifest carries them for user capabilities). */
  config: ResolvedConfig;
}

/** The protocol files of a registry that can be parsed (readable text). */
export function protocolFiles(input: RegistryInput): (SourceFile & { content: string })[] {
  return input.files.filter((file): file is SourceFile & { content: string } => isProtocolFile(file.path) && file.content !== undefined);
}

/** Parse every readable PROTOCOL.md. Callers with a cache or worker pool pass their own documents to `compileRegistry`. */
export function parseDocuments(input: RegistryInput): CapabilityDocument[] {
  return protocolFiles(input).map((file) => parseCapability(file.path, file.content));
}

/**
 * What a compile reads besides the protocols: the toolsets and the evals files, parsed. They do not
 * depend on the protocols, so the CLI parses them while the workers parse the protocols.
 */
export interface PreparedInput {
  toolsets: ParsedToolsets;
  evals: ParsedEvals[];
}

export function prepareInput(input: RegistryInput): PreparedInput {
  return { toolsets: toolsetsSourceOf(input.files), evals: parseEvalsFiles(input.files) };
}

export interface CompileOptions {
  config?: ResolvedConfig;
  /** Parsed documents for `input`'s protocol files (from a cache or workers); parsed here when absent. */
  documents?: CapabilityDocument[];
  /** `prepareInput(input)`, when the caller has it already; computed here when absent. */
  prepared?: PreparedInput;
  rules?: readonly AnyRule[];
  /** Facts kept from earlier compiles of the same documents (`--watch`, compiler/derived.ts); by default only those the manifest reads again, for this compile. */
  derived?: Derived;
  /** Filled with the milliseconds each rule took (runRules). */
  ruleTimes?: Map<string, number>;
}

export function compileRegistry(input: RegistryInput, options: CompileOptions = {}): CompileResult {
  const config = options.config ?? defaultConfig();
  const documents = options.documents ?? parseDocuments(input);
  const { toolsets, evals } = options.prepared ?? prepareInput(input);
  // A one-shot compile keeps only what its manifest reads again of lint's facts.
  const derived = options.derived ?? sharedWithinCompile(isComparedBlocksKey);
  const registry = createLintRegistry(documents, toolsets, input, evals, derived);
  const diagnostics = runRules(registry, options.rules ?? allRules, config.rules, options.ruleTimes);
  const errorCount = diagnostics.filter((d) => d.severity === 'error').length;
  return { diagnostics, registry, errorCount, warningCount: diagnostics.length - errorCount, config };
}

/** Emit: the manifest of a compile that had no errors. */
export function emitManifest(result: CompileResult, options: ManifestOptions): Manifest {
  if (result.errorCount > 0) throw new Error('emitManifest: the registry has lint errors; nothing may be emitted');
  return buildManifest(result.registry, { rules: result.config.rules, ...options });
}
