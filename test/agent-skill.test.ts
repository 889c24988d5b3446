// compiler/agent-skill.ts: names, descriptions within the limit, frontmatter that every reader parses
// back to the same object (the `yaml` package and the reference validator's reader), and bodies whose
// catalog instructions name skills.
import fc from 'fast-check';
import { parseFrontmatter, validateMetadata } from 'skills-ref';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { MAX_SKILL_DESCRIPTION_LENGTH, renderAgentSkill, skillName, type SkillSource } from '../compiler/agent-skill.js';
import { catalogInstruction } from '../compiler/render.js';
import { runs } from './support/property.js';

function source(overrides: Partial<SkillSource> = {}): SkillSource {
  return {
    id: 'work-reporting',
    name: 'Work reporting',
    description: 'Writes reports.',
    whenToUse: ['write my daily report'],
    protocolVersion: '1.2.0',
    protocolUpdated: '2025-01-01',
    requiredToolsets: ['work-logs'],
    dependencies: [],
    protocol: '---\nprotocol_version: 1.2.0\nprotocol_updated: 2025-01-01\n---\n\n# Work reporting\n\nNever invent entries.\n',
    ...overrides,
  };
}

function frontmatterOf(text: string): unknown {
  return parseYaml(/^---\n([\s\S]*?)\n---\n/.exec(text)?.[1] ?? '');
}

describe('skillName', () => {
  it.each([
    ['work-reporting', 'work-reporting'],
    ['user:abcdefghij234567', 'user-abcdefghij234567'],
    ['Upper', undefined],
    ['user:', undefined],
    ['a'.repeat(65), undefined],
    ['double--hyphen', undefined],
  ])('%s → %s', (id, name) => {
    expect(skillName(id)).toBe(name);
  });
});

describe('renderAgentSkill', () => {
  it('writes name, description and capreg metadata, and drops the served version frontmatter', () => {
    const skill = renderAgentSkill(source({ tags: ['reporting', 'work-log'], lifecyclePhase: 'ship', dependencies: ['personal-automation'] }));
    expect(skill.frontmatter).toEqual({
      name: 'work-reporting',
      description: 'Writes reports. Use it for requests like: "write my daily report".',
      metadata: {
        'capreg-id': 'work-reporting',
        version: '1.2.0',
        updated: '2025-01-01',
        'lifecycle-phase': 'ship',
        tags: 'reporting work-log',
        'required-toolsets': 'work-logs',
        dependencies: 'personal-automation',
      },
    });
    expect(skill.body).toBe('# Work reporting\n\nNever invent entries.\n');
    expect(skill.text).toBe(`---\n${skill.text.split('\n---\n')[0]?.slice(4)}\n---\n\n${skill.body}`);
  });

  it("rewrites the compiler's catalog instruction (also with a prefixed tool) to name the skill", () => {
    const instruction = catalogInstruction('the automations', 'personal-automation', 'yi_get_capability_protocol');
    const skill = renderAgentSkill(source({ dependencies: ['personal-automation'], protocol: `Use ${instruction}.\n` }), {
      protocolTool: 'yi_get_capability_protocol',
    });
    expect(skill.body).toBe(
      'Use the automations (`personal-automation`) (a separate skill: load the skill `personal-automation` and follow it; if it is not available to you or does not load, tell the user that this part cannot be done here and do not improvise it).\n',
    );
  });

  it('rewrites the instructions of 100 linked capabilities in one pass, not one pass over the body per capability', () => {
    // A user capability may link 100 capabilities (`uses`) some 550 times in its 5,000 tokens, which
    // render to ~150 KB; one pass per capability made each skills/list and skills/get of it ~50 ms.
    const linked = Array.from({ length: 100 }, (_, i) => `cap-${i}`);
    const protocol = Array.from({ length: 1500 }, (_, i) => `- ${catalogInstruction('', linked[i % 100] as string)}`).join('\n') + '\n';
    const fastest = (dependencies: string[]): { ms: number; body: string } => {
      let best = { ms: Infinity, body: '' };
      for (let run = 0; run < 3; run++) {
        const started = performance.now();
        const { body } = renderAgentSkill(source({ dependencies, protocol }));
        best = { ms: Math.min(best.ms, performance.now() - started), body };
      }
      return best;
    };
    const one = fastest(['cap-0']);
    const all = fastest(linked);
    expect(one.body.split('(a separate skill: load the skill `cap-0`')).toHaveLength(16);
    expect(all.body).not.toContain('a separate capability');
    expect(all.body.split('(a separate skill: load the skill ').length - 1).toBe(1500);
    // Linear: as fast as for one capability, within a margin for a busy machine (one pass each was ~100×).
    expect(all.ms).toBeLessThan(Math.max(10 * one.ms, 20));
  });

  it('keeps the description within 1,024 characters, with whole triggers only', () => {
    const skill = renderAgentSkill(source({ description: 'd'.repeat(1000), whenToUse: ['short', 'a much longer trigger that cannot fit'] }));
    expect(skill.frontmatter.description.length).toBeLessThanOrEqual(MAX_SKILL_DESCRIPTION_LENGTH);
    expect(skill.frontmatter.description).not.toContain('longer');
    const long = renderAgentSkill(source({ description: '😀'.repeat(600), whenToUse: [] }));
    expect(long.frontmatter.description.length).toBeLessThanOrEqual(MAX_SKILL_DESCRIPTION_LENGTH);
    expect(long.frontmatter.description.endsWith('…')).toBe(true);
    expect(long.frontmatter.description).not.toMatch(/[\uD800-\uDBFF]…$/);
  });

  it('marks user capabilities and leaves empty lists out', () => {
    const skill = renderAgentSkill(source({ id: 'user:abcdefghij234567', requiredToolsets: [], isUserDefined: true }));
    expect(skill.name).toBe('user-abcdefghij234567');
    expect(skill.frontmatter.metadata).toEqual({ 'capreg-id': 'user:abcdefghij234567', version: '1.2.0', updated: '2025-01-01', 'user-defined': 'true' });
  });

  it('refuses an id without a valid name', () => {
    expect(() => renderAgentSkill(source({ id: 'Bad Id' }))).toThrow(RangeError);
  });

  it('writes frontmatter that both readers parse back to the same object, and the validator accepts, for any text', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 300 }), fc.array(fc.string({ maxLength: 40 }), { maxLength: 4 }), (description, whenToUse) => {
        fc.pre(description.trim() !== '');
        const skill = renderAgentSkill(source({ description, whenToUse }));
        expect(frontmatterOf(skill.text)).toEqual(skill.frontmatter);
        const [metadata] = parseFrontmatter(skill.text);
        expect(metadata).toEqual(skill.frontmatter);
        expect(validateMetadata(metadata, '/x/work-reporting')).toEqual([]);
      }),
      { numRuns: runs(300) },
    );
  });

  it('writes only characters a YAML file may hold as they are: DEL, C1 controls, NEL, LS, PS, BOM, U+FFFE/U+FFFF escaped', () => {
    // YAML 1.2's non-printable characters (PyYAML refused the file: "unacceptable character #x007f"),
    // and the characters a YAML 1.1 reader takes as line breaks (PyYAML read "a\u0085b" as "a b").
    // (JSON escapes the C0 controls itself.)
    const unsafe = /[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]/;
    const text = 'a\u007fb\u0085c\u0086d\u009fe\u2028f\u2029g\ufeffh\ufffei\uffffj \\u007f';
    const skill = renderAgentSkill(source({ description: text, whenToUse: [text], tags: [text] }));
    const frontmatter = /^---\n([\s\S]*?\n)---\n/.exec(skill.text)?.[1] ?? '';
    expect(frontmatter).not.toMatch(unsafe);
    expect(frontmatterOf(skill.text)).toEqual(skill.frontmatter);
    expect(parseFrontmatter(skill.text)[0]).toEqual(skill.frontmatter);
    expect(skill.frontmatter.description.startsWith(text)).toBe(true);
  });

  it('escapes a run of three hyphens so a reader splitting on --- is not cut short', () => {
    const skill = renderAgentSkill(source({ description: 'before --- after ----' }));
    expect(skill.text.split('---')).toHaveLength(3);
    expect(parseFrontmatter(skill.text)[0]).toEqual(skill.frontmatter);
  });
});
