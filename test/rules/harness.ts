// Table tests for lint rules (ESLint's RuleTester idea): each case is a small in-memory registry;
// valid cases must produce no diagnostic from the rule, invalid ones exactly the listed ones, each
// named by its message id (and, with `data`, the exact message that template gives).
import { describe, expect, it } from 'vitest';
import { compileRegistry, parseDocuments, prepareInput, protocolFiles } from '../../compiler/compile.js';
import { defaultConfig, type ResolvedConfig } from '../../compiler/config.js';
import { DerivedFacts } from '../../compiler/derived.js';
import { toolsetsSourceOf } from '../../compiler/toolsets.js';
import { formatMessage, type AnyRule } from '../../compiler/rule.js';
import type { Diagnostic, RegistryInput } from '../../compiler/types.js';
import { registryInput } from '../support/registry.js';

export interface ExpectedDiagnostic {
  /** The key of the rule's `meta.messages` the diagnostic was reported with. */
  messageId: string;
  line: number;
  column: number;
  /** The template's data: the message must be exactly the template filled with it. */
  data?: Record<string, string | number>;
  severity?: 'error' | 'warning';
  /** Substring or pattern the message must match, where the test is about the text itself. */
  message?: string | RegExp;
  /** Defaults to `capabilities/<the only capability>/PROTOCOL.md` when omitted. */
  file?: string;
  endLine?: number;
  endColumn?: number;
}

export interface RuleCase {
  name: string;
  files: Record<string, string | null>;
  options?: Record<string, unknown>;
  level?: 'warn' | 'error';
  errors?: ExpectedDiagnostic[];
}

function configFor(rule: AnyRule, options?: Record<string, unknown>, level?: 'warn' | 'error'): ResolvedConfig {
  const config = defaultConfig();
  config.rules.set(rule.meta.id, {
    level: level ?? rule.meta.defaultLevel,
    options: { ...(rule.meta.defaultOptions as Record<string, unknown>), ...options },
  });
  return config;
}

export function lintWith(rule: AnyRule, input: RegistryInput, options?: Record<string, unknown>, level?: 'warn' | 'error'): Diagnostic[] {
  return compileRegistry(input, { config: configFor(rule, options, level), rules: [rule] }).diagnostics;
}

/**
 * The same lint after the rule has derived facts (compiler/derived.ts) from the same document
 * objects in other registries, as `--watch` does between edits: without each capability in turn,
 * without any toolsets, and with the rule's default options. A fact whose key or context misses
 * something it reads comes back stale in the last compile, and its diagnostics differ from a cold lint.
 */
export function lintWarm(rule: AnyRule, input: RegistryInput, options?: Record<string, unknown>, level?: 'warn' | 'error'): Diagnostic[] {
  const derived = new DerivedFacts();
  const documents = parseDocuments(input);
  const prepared = prepareInput(input);
  const rules = [rule];
  const protocols = protocolFiles(input).map((file) => file.path);
  for (const left of protocols) {
    const without = { ...input, files: input.files.filter((file) => file.path !== left), allPaths: input.allPaths.filter((file) => file !== left) };
    const kept = documents.filter((document) => document.file !== left);
    compileRegistry(without, { config: configFor(rule, options, level), documents: kept, prepared, rules, derived });
  }
  compileRegistry(input, { config: configFor(rule, options, level), documents, prepared: { ...prepared, toolsets: toolsetsSourceOf([]) }, rules, derived });
  compileRegistry(input, { config: configFor(rule), documents, prepared, rules, derived });
  return compileRegistry(input, { config: configFor(rule, options, level), documents, prepared, rules, derived }).diagnostics;
}

export function ruleTable(rule: AnyRule, cases: { valid: RuleCase[]; invalid: RuleCase[] }): void {
  describe(`rule ${rule.meta.id}`, () => {
    for (const testCase of cases.valid) {
      it(`valid: ${testCase.name}`, () => {
        const diagnostics = lintWith(rule, registryInput(testCase.files), testCase.options, testCase.level);
        expect(diagnostics.map((d) => `${d.file}:${d.line}:${d.column} ${d.message}`)).toEqual([]);
        expect(lintWarm(rule, registryInput(testCase.files), testCase.options, testCase.level), 'with facts kept from other compiles').toEqual(diagnostics);
      });
    }
    for (const testCase of cases.invalid) {
      it(`invalid: ${testCase.name}`, () => {
        const diagnostics = lintWith(rule, registryInput(testCase.files), testCase.options, testCase.level);
        expect(lintWarm(rule, registryInput(testCase.files), testCase.options, testCase.level), 'with facts kept from other compiles').toEqual(diagnostics);
        const expected = testCase.errors ?? [];
        if (expected.length === 0) throw new Error('an invalid case must list its expected diagnostics');
        expect(diagnostics.map((d) => `${d.file}:${d.line}:${d.column} ${d.message}`)).toHaveLength(expected.length);
        diagnostics.forEach((diagnostic, index) => {
          const want = expected[index]!;
          expect(diagnostic.ruleId).toBe(rule.meta.id);
          expect(diagnostic.messageId, `diagnostic ${index + 1}: ${diagnostic.message}`).toBe(want.messageId);
          expect(want.messageId in rule.meta.messages, `"${want.messageId}" is not a message of ${rule.meta.id}`).toBe(true);
          if (want.data !== undefined) expect(diagnostic.message).toBe(formatMessage(rule.meta.messages[want.messageId]!, want.data));
          expect({ line: diagnostic.line, column: diagnostic.column }).toEqual({ line: want.line, column: want.column });
          if (want.endLine !== undefined) expect(diagnostic.endLine).toBe(want.endLine);
          if (want.endColumn !== undefined) expect(diagnostic.endColumn).toBe(want.endColumn);
          expect(diagnostic.severity).toBe(want.severity ?? (rule.meta.defaultLevel === 'warn' ? 'warning' : 'error'));
          if (want.file !== undefined) expect(diagnostic.file).toBe(want.file);
          if (typeof want.message === 'string') expect(diagnostic.message).toContain(want.message);
          else if (want.message) expect(diagnostic.message).toMatch(want.message);
        });
      });
    }
  });
}
