// One cause, one diagnostic. A diagnostic about a broken fact (a frontmatter that did not parse, a
// field that failed the schema, a toolset that does not exist) marks that fact; a diagnostic whose
// conclusion rests on a marked fact is dropped, since it would only restate the first one in other
// words ("add it to optionalToolsets" for every tool of a misspelled toolset). The marking
// diagnostic must be reported: a rule that is off marks nothing, so its dependents still report.
import type { LintCapability } from './rule.js';

export type Fact =
  /** The capability's frontmatter did not parse: none of its fields is known. */
  | { kind: 'frontmatter'; file: string }
  /** One frontmatter value (a JSON pointer such as `/requiredToolsets/0`) failed the schema. */
  | { kind: 'field'; file: string; path: string }
  /** toolsets.yaml is missing or does not parse: no toolset is known. */
  | { kind: 'toolsets-file' }
  /** A toolset id that is not defined, or whose definition failed its schema. */
  | { kind: 'toolset'; id: string }
  /** A tool whose definition failed the toolsets schema (it is left out of the usable toolsets). */
  | { kind: 'tool'; name: string };

/** Whether a JSON pointer is the other or inside it (a broken `/states/1` breaks `/states`, and a broken `/states` breaks `/states/1`). */
function overlaps(a: string, b: string): boolean {
  return a === b || a.startsWith(`${b}/`) || b.startsWith(`${a}/`);
}

/** The facts that diagnostics marked as broken in one lint run. */
export class BrokenFacts {
  private readonly frontmatters = new Set<string>();
  private readonly fields = new Map<string, string[]>();
  private toolsetsFile = false;
  private readonly toolsets = new Set<string>();
  private readonly tools = new Set<string>();

  mark(fact: Fact): void {
    switch (fact.kind) {
      case 'frontmatter':
        this.frontmatters.add(fact.file);
        break;
      case 'field':
        this.fields.set(fact.file, [...(this.fields.get(fact.file) ?? []), fact.path]);
        break;
      case 'toolsets-file':
        this.toolsetsFile = true;
        break;
      case 'toolset':
        this.toolsets.add(fact.id);
        break;
      case 'tool':
        this.tools.add(fact.name);
        break;
    }
  }

  has(fact: Fact): boolean {
    switch (fact.kind) {
      case 'frontmatter':
        return this.frontmatters.has(fact.file);
      case 'field':
        return this.frontmatters.has(fact.file) || (this.fields.get(fact.file) ?? []).some((path) => overlaps(path, fact.path));
      case 'toolsets-file':
        return this.toolsetsFile;
      case 'toolset':
        return this.toolsetsFile || this.toolsets.has(fact.id);
      case 'tool':
        return this.toolsetsFile || this.tools.has(fact.name);
    }
  }
}

/** A frontmatter field of a capability. */
export function fieldFact(capability: LintCapability, path: string): Fact {
  return { kind: 'field', file: capability.document.file, path };
}

/**
 * What a conclusion about "this capability's own toolsets and their tools" rests on: the
 * `requiredToolsets` and `optionalToolsets` fields, and every toolset they name.
 */
export function ownToolsetFacts(capability: LintCapability): Fact[] {
  const { fm } = capability;
  return [
    fieldFact(capability, '/requiredToolsets'),
    fieldFact(capability, '/optionalToolsets'),
    { kind: 'toolsets-file' },
    ...[...(fm.requiredToolsets ?? []), ...(fm.optionalToolsets ?? [])].map((id): Fact => ({ kind: 'toolset', id })),
  ];
}
