// The thin client skill: Agent Skills frontmatter, tool names that follow the prefix, the rules
// the issue asks for, and a stable size.
import { parse as parseYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import { renderClientSkill } from '../compiler/skill.js';

function frontmatter(skill: string): Record<string, unknown> {
  const match = /^---\n([\s\S]*?)\n---\n/.exec(skill);
  if (!match) throw new Error('no frontmatter');
  return parseYaml(match[1] as string) as Record<string, unknown>;
}

describe('renderClientSkill', () => {
  it('has Agent Skills frontmatter with only name and description', () => {
    const data = frontmatter(renderClientSkill({ toolPrefix: '' }));
    expect(Object.keys(data).sort()).toEqual(['description', 'name']);
    expect(data['name']).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
    expect((data['name'] as string).length).toBeLessThanOrEqual(64);
    expect(typeof data['description']).toBe('string');
    expect((data['description'] as string).length).toBeGreaterThan(20);
    expect((data['description'] as string).length).toBeLessThanOrEqual(1024);
  });

  it('names the unprefixed tools without a prefix', () => {
    const skill = renderClientSkill({ toolPrefix: '' });
    for (const tool of ['list_capabilities', 'get_capability_protocol', 'get_current_user']) expect(skill).toContain(`\`${tool}\``);
  });

  it('names only prefixed tools with a prefix', () => {
    const skill = renderClientSkill({ toolPrefix: 'yi_' });
    for (const tool of ['list_capabilities', 'get_capability_protocol', 'get_current_user']) {
      expect(skill).toContain(`\`yi_${tool}\``);
      expect(skill).not.toMatch(new RegExp(`\`${tool}\``));
    }
  });

  it('teaches the workflow and the rules the server relies on', () => {
    const skill = renderClientSkill({ toolPrefix: '' });
    expect(skill).toMatch(/whenToUse/);
    expect(skill).toMatch(/protocolTool/);
    expect(skill).toMatch(/protocolInput/);
    expect(skill).toMatch(/Never keep a protocol in memory/);
    expect(skill).toMatch(/cannot be loaded[\s\S]*Do not improvise/);
    expect(skill).toMatch(/catalogVersion/);
  });

  it('says when to list again without needing a listing to know it', () => {
    const skill = renderClientSkill({ toolPrefix: '' });
    // catalogVersion arrives only with a listing, so it cannot be what prompts the next one.
    expect(skill).not.toMatch(/When `catalogVersion` differs[^.]*list again/);
    expect(skill).toMatch(/List again at the start of each new task, and when a\n {2}protocol you were shown no longer loads/);
  });

  it('says what to do when a protocol names a tool the agent lacks', () => {
    expect(renderClientSkill({ toolPrefix: '' })).toMatch(/tools you do not have[\s\S]*never pretend to call it or make up its result/);
  });

  it('is about 50 lines and byte-stable', () => {
    const skill = renderClientSkill({ toolPrefix: 'x_' });
    const lines = skill.split('\n').length;
    expect(lines).toBeGreaterThan(30);
    expect(lines).toBeLessThan(70);
    expect(renderClientSkill({ toolPrefix: 'x_' })).toBe(skill);
    expect(skill.endsWith('\n')).toBe(true);
  });

  it('refuses a prefix that cannot be part of a tool name', () => {
    for (const prefix of ['a b', 'x/', '`', 'é_', '-x_', '.x', 'a'.repeat(65)]) expect(() => renderClientSkill({ toolPrefix: prefix })).toThrow(RangeError);
  });
});
