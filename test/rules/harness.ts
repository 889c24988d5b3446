// Table tests for lint rules (ESLint's RuleTester idea): each case is a small in-memory registry;
// valid cases must produce no diagnostic from the rule, invalid ones exactly the listed ones, each
// named by its message id (and, with `data`, the exact message that template gives).
import { describe, expect, it } from 'vitest';
import { compileRegistry, parseDocuments, prepareInput, protocolFiles } from '../../compiler/compile.js';
import { defaultConfig, type ResolvedConfig } from '../../compiler/config.js';
import { DerivedFacts } from '../../compiler/derived.js';
import { isToolsetsFile, toolsetsSourceOf, type ParsedToolsets } from '../../compiler/toolsets.js';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
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
 * objects in another registry, as `--watch` does between edits: one lint after each of these
 * others — the rule's default options, without each capability in turn, without each toolset in
 * turn, without any toolsets. A fact whose key or context misses something it reads comes back
 * stale, and that lint's diagnostics differ from a cold one.
 */
export function lintWarm(rule: AnyRule, input: RegistryInput, options?: Record<string, unknown>, level?: 'warn' | 'error'): Diagnostic[][] {
  const documents = parseDocuments(input);
  const prepared = prepareInput(input);
  const rules = [rule];
  const config = configFor(rule, options, level);
  const others: Parameters<typeof compileRegistry>[] = [[input, { config: configFor(rule), documents, prepared }]];
  for (const left of protocolFiles(input).map((file) => file.path)) {
    const without = { ...input, files: input.files.filter((file) => file.path !== left), allPaths: input.allPaths.filter((file) => file !== left) };
    others.push([without, { config, documents: documents.filter((document) => document.file !== left), prepared }]);
  }
  for (const toolsets of [...toolsetsWithoutOne(input), toolsetsSourceOf([])]) others.push([input, { config, documents, prepared: { ...prepared, toolsets } }]);
  return others.map(([otherInput, otherOptions]) => {
    const derived = new DerivedFacts();
    compileRegistry(otherInput, { ...otherOptions, rules, derived });
    return compileRegistry(input, { config, documents, prepared, rules, derived }).diagnostics;
  });
}

/** The registry's toolsets with one toolset taken out, for each toolset of each toolsets file. */
function toolsetsWithoutOne(input: RegistryInput): ParsedToolsets[] {
  const variants: ParsedToolsets[] = [];
  for (const file of input.files) {
    if (!isToolsetsFile(file.path) || file.content === undefined) continue;
    let data: unknown;
    try {
      data = parseYaml(file.content);
    } catch {
      continue;
    }
    if (data === null || typeof data !== 'object' || Array.isArray(data)) continue;
    for (const id of Object.keys(data)) {
      const { [id]: _left, ...rest } = data as Record<string, unknown>;
      const content = stringifyYaml(rest);
      variants.push(toolsetsSourceOf(input.files.map((other) => (other === file ? { path: file.path, content } : other))));
    }
  }
  return variants;
}

export function ruleTable(rule: AnyRule, cases: { valid: RuleCase[]; invalid: RuleCase[] }): void {
  describe(`rule ${rule.meta.id}`, () => {
    for (const testCase of cases.valid) {
      it(`valid: ${testCase.name}`, () => {
        const diagnostics = lintWith(rule, registryInput(testCase.files), testCase.options, testCase.level);
        expect(diagnostics.map((d) => `${d.file}:${d.line}:${d.column} ${d.message}`)).toEqual([]);
        for (const warm of lintWarm(rule, registryInput(testCase.files), testCase.options, testCase.level)) {
          expect(warm, 'with facts kept from another compile').toEqual(diagnostics);
        }
      });
    }
    for (const testCase of cases.invalid) {
      it(`invalid: ${testCase.name}`, () => {
        const diagnostics = lintWith(rule, registryInput(testCase.files), testCase.options, testCase.level);
        for (const warm of lintWarm(rule, registryInput(testCase.files), testCase.options, testCase.level)) {
          expect(warm, 'with facts kept from another compile').toEqual(diagnostics);
        }
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
