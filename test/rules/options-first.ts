// lintWarm (harness.ts) first derives facts with the case's own options, so a fact whose key misses
// an option would come back right in its last compile. This lints with the rule's default options
// first and then with `options`, over the same document objects and kept facts: a key that misses
// an option gives the facts of the defaults, and the diagnostics differ from a cold lint.
import { compileRegistry, parseDocuments, prepareInput } from '../../compiler/compile.js';
import { defaultConfig, type ResolvedConfig } from '../../compiler/config.js';
import { DerivedFacts } from '../../compiler/derived.js';
import type { AnyRule } from '../../compiler/rule.js';
import type { Diagnostic, RegistryInput } from '../../compiler/types.js';

function configWith(rule: AnyRule, options: Record<string, unknown>): ResolvedConfig {
  const config = defaultConfig();
  config.rules.set(rule.meta.id, { level: rule.meta.defaultLevel, options: { ...(rule.meta.defaultOptions as Record<string, unknown>), ...options } });
  return config;
}

export function lintAfterDefaultOptions(rule: AnyRule, input: RegistryInput, options: Record<string, unknown>): Diagnostic[] {
  const derived = new DerivedFacts();
  const documents = parseDocuments(input);
  const prepared = prepareInput(input);
  compileRegistry(input, { config: configWith(rule, {}), documents, prepared, rules: [rule], derived });
  return compileRegistry(input, { config: configWith(rule, options), documents, prepared, rules: [rule], derived }).diagnostics;
}
