// The bundled registry is the reference for authors: it must lint with zero diagnostics, and the
// protocols it serves must say what an agent needs at every step that changes something, keep to
// their own declared scope, bound every wait, and contain nothing an agent cannot follow.
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { catalogInstruction } from '../compiler/render.js';
import { REPO_ROOT, run, tempDir } from './cli/helpers.js';

interface ServedCapability {
  id: string;
  protocol: string;
  scopeConstraints?: string[];
  states?: string[];
}

let served: Map<string, ServedCapability>;

beforeAll(async () => {
  const out = tempDir();
  const result = await run(['build', '--root', REPO_ROOT, '--out', out, '--no-cache', '--max-warnings', '0'], { cwd: REPO_ROOT });
  expect(result.stderr).not.toMatch(/warning|error/i);
  expect(result.code).toBe(0);
  const manifest = JSON.parse(fs.readFileSync(path.join(out, 'manifest.json'), 'utf8')) as { capabilities: ServedCapability[] };
  served = new Map(manifest.capabilities.map((capability) => [capability.id, capability]));
});

/** The text of one `## heading` section (up to the next heading of the same or a higher level). */
function section(protocol: string, heading: string): string {
  const start = protocol.indexOf(`\n## ${heading}\n`);
  expect(start, `no section "${heading}"`).toBeGreaterThanOrEqual(0);
  const rest = protocol.slice(start + 1);
  const end = rest.slice(1).search(/\n## /);
  return end === -1 ? rest : rest.slice(0, end + 1);
}

describe('the bundled protocols as served', () => {
  it('contain no relative link: an agent has only the protocol, not the folder', () => {
    for (const { id, protocol } of served.values()) {
      const relative = [...protocol.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]!).filter((url) => !/^[a-z][a-z0-9+.-]*:/i.test(url));
      expect(relative, id).toEqual([]);
    }
  });

  it('ask for an explicit yes before every reminder or task is created, changed or removed', () => {
    const protocol = served.get('personal-automation')!.protocol;
    const reminders = section(protocol, 'Reminders');
    expect(reminders.indexOf('wait\n   for an explicit yes')).toBeGreaterThan(-1);
    expect(reminders.indexOf('explicit yes')).toBeLessThan(reminders.indexOf('`automation_create_reminder`'));
    expect(reminders).toMatch(/wait for a yes before\n`automation_update_reminder` or `automation_cancel_reminder`/);
    expect(section(protocol, 'Scheduled tasks')).toMatch(/wait for an explicit yes/);
  });

  it('bound every state that says to keep polling', () => {
    for (const { id, protocol, states = [] } of served.values()) {
      for (const state of states) {
        const entry = new RegExp(`- \\*\\*${state}\\*\\* — ([\\s\\S]*?)(?=\\n- \\*\\*|\\n\\n)`).exec(protocol)?.[1] ?? '';
        if (/keep polling|poll /i.test(entry)) expect(entry, `${id} ${state}`).toMatch(/\d+ (seconds|minutes)|stop polling/i);
      }
    }
  });

  it('keep test-driven-development inside the scope its frontmatter declares', () => {
    const tdd = served.get('test-driven-development')!;
    expect(tdd.scopeConstraints).toContain('Only files inside the workspace root.');
    expect(tdd.protocol).not.toMatch(/outside the workspace root[^.]*without asking/);
    expect(tdd.protocol).toMatch(/Never touch files outside the workspace root/);
  });

  it('name one time-zone source when work-reporting hands a schedule to personal-automation', () => {
    const scheduling = section(served.get('work-reporting')!.protocol, 'Scheduled reports');
    expect(scheduling).toMatch(/not converted: the schedule runs in the time zone\nof that protocol's preferences/);
    expect(section(served.get('personal-automation')!.protocol, 'Times and time zones')).toMatch(/never convert silently/);
  });

  it('render a capability link with what to do when the target is not in the catalog', () => {
    const instruction = catalogInstruction('personal-automation', 'personal-automation');
    expect(served.get('work-reporting')!.protocol).toContain(instruction);
    expect(instruction).toMatch(/if it is not in your catalog or does not load, tell the user that this part cannot be done here and do not improvise it/);
  });
});
