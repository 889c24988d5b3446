// Lints with facts kept from an earlier compile of the same document objects (compiler/derived.ts),
// as in `--watch` when only toolsets.yaml or the config changed: the result must be what a cold lint
// gives. The rule-table harness (lintWarm) covers most keys and contexts, but not these two:
// - its compile "without any toolsets" lets the rules that need toolsets derive nothing, so a fact
//   that reads the toolsets but is kept without them in its context goes unseen;
// - every fact is derived with the case's options before its compile with the default options, so
//   a key that misses an option comes back right by luck.
import { expect, it } from 'vitest';
import { compileRegistry, parseDocuments } from '../../compiler/compile.js';
import { defaultConfig, type ResolvedConfig } from '../../compiler/config.js';
import { DerivedFacts } from '../../compiler/derived.js';
import type { AnyRule } from '../../compiler/rule.js';
import type { Diagnostic, RegistryInput } from '../../compiler/types.js';
import { registryInput } from '../support/registry.js';

const TOOLSETS_FILE = 'capabilities/toolsets.yaml';

export interface KeptFactsLint {
  /** A lint from nothing of the files, after the edit. */
  cold: Diagnostic[];
  /** The same lint after the rule derived facts from the same documents before the edit. */
  warm: Diagnostic[];
  /** A lint from nothing before the edit: must differ from `cold`, or the case proves nothing. */
  before: Diagnostic[];
}

function configFor(rule: AnyRule, options: Record<string, unknown> = {}): ResolvedConfig {
  const config = defaultConfig();
  config.rules.set(rule.meta.id, { level: rule.meta.defaultLevel, options: { ...(rule.meta.defaultOptions as Record<string, unknown>), ...options } });
  return config;
}

function lintTwice(
  rule: AnyRule,
  first: { input: RegistryInput; config: ResolvedConfig },
  then: { input: RegistryInput; config: ResolvedConfig },
): KeptFactsLint {
  const documents = parseDocuments(then.input);
  const derived = new DerivedFacts();
  const rules = [rule];
  const before = compileRegistry(first.input, { config: first.config, documents, rules, derived }).diagnostics;
  const warm = compileRegistry(then.input, { config: then.config, documents, rules, derived }).diagnostics;
  const cold = compileRegistry(then.input, { config: then.config, rules }).diagnostics;
  return { cold, warm, before };
}

function expectKept(lint: KeptFactsLint): void {
  expect(lint.cold, 'the edit changes the findings').not.toEqual(lint.before);
  expect(lint.warm, 'with facts kept from before the edit').toEqual(lint.cold);
}

/** A test: the protocols stay, toolsets.yaml was `toolsetsBefore` and is now the one in `files` (or the default). */
export function toolsetsEditCase(rule: AnyRule, name: string, files: Record<string, string | null>, toolsetsBefore: string): void {
  it(`after a toolsets edit: ${name}`, () => {
    const config = configFor(rule);
    expectKept(lintTwice(rule, { input: registryInput({ ...files, [TOOLSETS_FILE]: toolsetsBefore }), config }, { input: registryInput(files), config }));
  });
}

/** A test: the protocols stay, the rule's options were `optionsBefore` and are now `options`. */
export function optionsEditCase(
  rule: AnyRule,
  name: string,
  files: Record<string, string | null>,
  optionsBefore: Record<string, unknown>,
  options: Record<string, unknown>,
): void {
  it(`after an options edit: ${name}`, () => {
    const input = registryInput(files);
    expectKept(lintTwice(rule, { input, config: configFor(rule, optionsBefore) }, { input, config: configFor(rule, options) }));
  });
}
