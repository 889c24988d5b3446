import { describe, expect, it } from 'vitest';
import type { CatalogContext } from '../compiler/compile-one.js';
import { compileUserCapability } from '../compiler/user/compile-user.js';
import type { ManifestCapability } from '../compiler/types.js';

function platform(id: string, requiredToolsets: string[], optionalToolsets: string[] = []): ManifestCapability {
  return {
    id,
    name: id,
    description: `${id} capability`,
    whenToUse: [`use ${id}`],
    requiredToolsets,
    optionalToolsets,
    protocolVersion: '1.0.0',
    protocolUpdated: '2026-11-29',
    digest: `sha256:${'0'.repeat(64)}`,
    references: [],
    protocol: '---\nprotocol_version: 1.0.0\nprotocol_updated: 2026-11-29\n---\n\nNever guess.\n',
  };
}

const catalog: CatalogContext = {
  capabilities: [platform('work-reporting', ['work-logs']), platform('personal-automation', ['automation'])],
  toolsets: {
    'work-logs': { description: 'logs', tools: { work_log_generate_report: { action: 'write', description: 'generate' } } },
    automation: { description: 'automation', tools: { automation_create_task: { action: 'write', description: 'create' } } },
  },
};

function markdown(frontmatter: string, body: string): string {
  return `---\n${frontmatter}---\n${body}`;
}

const GOOD_FRONTMATTER = `name: Friday report
description: Generates my weekly report every Friday.
whenToUse:
  - set up my friday report
uses: [work-reporting, personal-automation]
toolBindings:
  - step: schedule
    capability: personal-automation
    tools: [automation_create_task]
`;

describe('compileUserCapability', () => {
  it('compiles a valid workflow and delivers only the capabilities it links to', () => {
    const result = compileUserCapability(
      markdown(GOOD_FRONTMATTER, '\n1. Load [automation](capability:personal-automation) and schedule the report.\n\nNever schedule without asking.\n'),
      catalog,
    );
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.capability.uses).toEqual(['work-reporting', 'personal-automation']);
    expect(result.capability.dependencies).toEqual(['personal-automation']);
    expect(result.capability.toolBindings).toEqual([{ step: 'schedule', capability: 'personal-automation', tools: ['automation_create_task'] }]);
    expect(result.capability.protocol).toContain('call `get_capability_protocol` with `{"capabilityId": "personal-automation"}`');
    expect(result.capability.protocol).not.toContain('capability:personal-automation');
  });

  it('refuses a link to a capability not listed in uses, at the link', () => {
    const result = compileUserCapability(
      markdown(
        GOOD_FRONTMATTER.replace('uses: [work-reporting, personal-automation]', 'uses: [work-reporting]'),
        '\nLoad [a](capability:personal-automation).\n\nNever guess.\n',
      ),
      catalog,
    );
    expect(result.ok).toBe(false);
    const uses = result.diagnostics.filter((d) => d.ruleId === 'user-uses');
    expect(uses).toHaveLength(1);
    expect(uses[0]).toMatchObject({ line: 13, column: 6, severity: 'error' });
    expect(uses[0]!.message).toContain('"personal-automation", which is not listed in `uses`');
  });

  it('reports an unknown or invisible `uses` entry the same way', () => {
    const result = compileUserCapability(
      markdown(GOOD_FRONTMATTER.replace('uses: [work-reporting,', 'uses: [secret-payroll,'), '\nNever guess. [a](capability:personal-automation)\n'),
      catalog,
    );
    expect(result.ok).toBe(false);
    const unknown = result.diagnostics.find((d) => d.ruleId === 'user-uses');
    expect(unknown).toMatchObject({ line: 6, column: 8 });
    expect(unknown!.message).toBe('`uses` lists "secret-payroll", which is not a capability you can use');
  });

  it('refuses a bound tool outside the linked capability toolsets, with a position', () => {
    const result = compileUserCapability(
      markdown(
        GOOD_FRONTMATTER.replace('tools: [automation_create_task]', 'tools: [work_log_generate_report]'),
        '\nUse [a](capability:personal-automation).\n\nNever guess.\n',
      ),
      catalog,
    );
    expect(result.ok).toBe(false);
    const binding = result.diagnostics.find((d) => d.ruleId === 'user-tool-bindings');
    expect(binding).toMatchObject({ line: 10, column: 13 });
    expect(binding!.message).toContain('tool "work_log_generate_report" of step "schedule" is not in the toolsets of "personal-automation" (automation)');
  });

  it('refuses a binding to a capability the workflow does not link to', () => {
    const result = compileUserCapability(markdown(GOOD_FRONTMATTER, '\nNo links here. Never guess.\n'), catalog);
    expect(result.ok).toBe(false);
    expect(result.diagnostics.find((d) => d.ruleId === 'user-tool-bindings')!.message).toContain(
      'has no [personal-automation](capability:personal-automation) link',
    );
  });

  it('reports schema problems with did-you-mean and refuses an id field', () => {
    const result = compileUserCapability(
      markdown(`${GOOD_FRONTMATTER}id: mine\nwhenToUes: [x]\n`, '\nNever guess. [a](capability:personal-automation)\n'),
      catalog,
    );
    expect(result.ok).toBe(false);
    const messages = result.diagnostics.filter((d) => d.ruleId === 'user-frontmatter').map((d) => `${d.line}:${d.column} ${d.message}`);
    expect(messages).toEqual(['11:1 unknown field "id"', '12:1 unknown field "whenToUes"; did you mean "whenToUse"?']);
  });

  it('refuses markdown over the size limit without parsing it', () => {
    const result = compileUserCapability('x'.repeat(2000), catalog, { maxBytes: 1000 });
    expect(result).toEqual({
      ok: false,
      diagnostics: [
        expect.objectContaining({ ruleId: 'user-frontmatter', message: expect.stringContaining('2000 bytes, over the 1000-byte limit') as unknown }),
      ],
    });
  });

  it('refuses a NUL or a lone surrogate, which a store could not keep as written, and takes surrogate pairs', () => {
    const VALID_WORKFLOW = markdown(
      GOOD_FRONTMATTER,
      '\n1. Load [automation](capability:personal-automation) and schedule the report.\n\nNever schedule without asking.\n',
    );
    const valid = compileUserCapability(VALID_WORKFLOW, catalog);
    expect(valid.ok).toBe(true);
    for (const [bad, message] of [
      [`${VALID_WORKFLOW}\u0000`, /NUL character/],
      [`${VALID_WORKFLOW}\ud800 x`, /lone UTF-16 surrogate/],
      [`${VALID_WORKFLOW}x \udfff`, /lone UTF-16 surrogate/],
    ] as const) {
      expect(compileUserCapability(bad, catalog)).toEqual({
        ok: false,
        diagnostics: [expect.objectContaining({ message: expect.stringMatching(message) as unknown })],
      });
    }
    expect(compileUserCapability(`${VALID_WORKFLOW}\nEmoji are fine: \u{1F600}.\n`, catalog).ok).toBe(true);
  });

  it('refuses markdown without frontmatter with a positioned diagnostic', () => {
    const result = compileUserCapability('# Just a title\n\nNever guess.\n', catalog);
    expect(result.ok).toBe(false);
    expect(result.diagnostics[0]).toMatchObject({ ruleId: 'user-frontmatter', line: 1, column: 1 });
  });
});
