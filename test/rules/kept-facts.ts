// A lint after the toolsets changed under unchanged protocols, as in `--watch` when only toolsets.yaml
// was edited: the rule has derived facts (compiler/derived.ts) from the same document objects with
// the old toolsets, and must give what a cold lint with the new toolsets gives. The rule-table
// harness lints "without any toolsets", where the rules that need toolsets derive nothing; these
// cases are for a fact that reads the toolsets but is kept without them in its context.
import { expect, it } from 'vitest';
import { compileRegistry, parseDocuments } from '../../compiler/compile.js';
import { defaultConfig } from '../../compiler/config.js';
import { DerivedFacts } from '../../compiler/derived.js';
import type { AnyRule } from '../../compiler/rule.js';
import type { Diagnostic } from '../../compiler/types.js';
import { registryInput } from '../support/registry.js';
import { lintWith } from './harness.js';

const TOOLSETS_FILE = 'capabilities/toolsets.yaml';

export interface ToolsetsEditLint {
  /** A lint from nothing of the files with the new toolsets. */
  cold: Diagnostic[];
  /** The same lint after the rule derived facts from the same documents with the old toolsets. */
  warm: Diagnostic[];
  /** A lint from nothing with the old toolsets: must differ from `cold`, or the case proves nothing. */
  before: Diagnostic[];
}

export function lintAfterToolsetsEdit(rule: AnyRule, files: Record<string, string | null>, toolsetsBefore: string): ToolsetsEditLint {
  const input = registryInput(files);
  const old = registryInput({ ...files, [TOOLSETS_FILE]: toolsetsBefore });
  const config = defaultConfig();
  config.rules.set(rule.meta.id, { level: rule.meta.defaultLevel, options: rule.meta.defaultOptions });
  const documents = parseDocuments(input);
  const derived = new DerivedFacts();
  const before = compileRegistry(old, { config, documents, rules: [rule], derived }).diagnostics;
  const warm = compileRegistry(input, { config, documents, rules: [rule], derived }).diagnostics;
  return { cold: lintWith(rule, input), warm, before };
}

/** A test: the lint after the edit equals a cold lint, and the edit changes what a cold lint finds. */
export function toolsetsEditCase(rule: AnyRule, name: string, files: Record<string, string | null>, toolsetsBefore: string): void {
  it(`after a toolsets edit: ${name}`, () => {
    const { cold, warm, before } = lintAfterToolsetsEdit(rule, files, toolsetsBefore);
    expect(cold, 'the edit changes the findings').not.toEqual(before);
    expect(warm, 'with facts kept from the old toolsets').toEqual(cold);
  });
}
