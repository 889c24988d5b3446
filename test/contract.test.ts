// The catalog contract has one home (compiler/contract.ts): the token-budget rule prices exactly
// the listing the server serves, the client skill names exactly the server's tools, the package
// version reaches every consumer, and no other source file repeats a tool name, the link scheme or
// the prefix rule.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { countTokens } from 'gpt-tokenizer';
import { describe, expect, it } from 'vitest';
import { compileRegistry, emitManifest } from '../compiler/compile.js';
import { parseConfig } from '../compiler/config.js';
import {
  BASE_TOOL_NAMES,
  CAPABILITY_SCHEME,
  CAPREG_VERSION,
  PROTOCOL_TOOL,
  capabilityLink,
  capabilityTarget,
  catalogEntry,
  isValidToolPrefix,
  linkedCapabilities,
  toolNames,
} from '../compiler/contract.js';
import { tokenBudget } from '../compiler/rules/token-budget.js';
import { renderClientSkill } from '../compiler/skill.js';
import type { LinkRef, Manifest } from '../compiler/types.js';
import { Catalog } from '../server/catalog.js';
import { Grants } from '../server/permissions.js';
import { REPO_ROOT, runBin } from './cli/helpers.js';
import { protocol, registryInput } from './support/registry.js';

const tools = (...names: string[]) => `## Tools\n\n| Tool | Use |\n| --- | --- |\n${names.map((name) => `| \`${name}\` | As needed. |\n`).join('')}`;
const FILES = {
  'capabilities/alpha/PROTOCOL.md': protocol(
    { id: 'alpha', requiredToolsets: ['work-logs'] },
    `Never guess. Then follow [beta](capability:beta).\n\n- **PENDING**: wait; do not report it as done.\n- **DONE**: report it.\n\n${tools('work_log_record', 'work_log_list', 'work_log_generate')}`,
  ),
  'capabilities/beta/PROTOCOL.md': protocol(
    {
      id: 'beta',
      name: 'Bêta — 报告',
      description: 'Writes "quoted" reports\nacross lines.',
      whenToUse: ['write my weekly report', 'summarize 本月'],
      requiredToolsets: ['automation'],
      protocol_version: '2.3.4',
    },
    `Do not guess.\n\n${tools('automation_create_task', 'automation_list_tasks')}`,
  ),
};

function manifestOf(files: Record<string, string>): Manifest {
  const compiled = compileRegistry(registryInput(files));
  if (compiled.errorCount > 0) throw new Error(compiled.diagnostics.map((d) => `${d.file}:${d.line} ${d.ruleId} ${d.message}`).join('\n'));
  return emitManifest(compiled, { source: null, generator: 'test' });
}

describe('the catalog entry', () => {
  const tokensMessage = (catalog: number) => {
    const config = parseConfig(`rules:\n  token-budget: [warn, {catalog: ${catalog}}]\n`);
    return compileRegistry(registryInput(FILES), { config, rules: [tokenBudget] }).diagnostics.map((d) => d.message);
  };

  it('token-budget prices exactly the listing a caller who sees everything gets from the server', () => {
    const manifest = manifestOf(FILES);
    const catalog = new Catalog(manifest, toolNames(''));
    const listing = catalog.visibleCapabilities(new Grants(Object.keys(manifest.toolsets).map((toolset) => `${toolset}:read`)));
    expect(listing.capabilities.map((entry) => entry.id)).toEqual(['alpha', 'beta']);
    const served = countTokens(JSON.stringify(listing.capabilities));
    expect(tokensMessage(served)).toEqual([]);
    expect(tokensMessage(served - 1)).toEqual([expect.stringContaining(`is ${served} tokens, over the budget of ${served - 1}`)]);
  });

  it('the server lists the rows catalogEntry() builds: same keys, same order, frozen', () => {
    const manifest = manifestOf(FILES);
    const names = toolNames('yi_');
    const listing = new Catalog(manifest, names).visibleCapabilities(new Grants(['work-logs:read', 'automation:read']));
    for (const [index, capability] of manifest.capabilities.entries()) {
      const expected = catalogEntry(capability, names.getCapabilityProtocol);
      const served = listing.capabilities[index];
      expect(JSON.stringify(served)).toBe(JSON.stringify(expected));
      expect(Object.isFrozen(served) && Object.isFrozen(served?.whenToUse) && Object.isFrozen(served?.protocolInput)).toBe(true);
    }
    expect(Object.keys(catalogEntry({ id: 'x', name: '', description: '', whenToUse: [], protocolVersion: '1.0.0' }, PROTOCOL_TOOL))).toEqual([
      'id',
      'name',
      'description',
      'whenToUse',
      'protocolTool',
      'protocolInput',
      'protocolVersion',
    ]);
  });

  it('does not share the caller’s whenToUse array', () => {
    const whenToUse = ['a'];
    const entry = catalogEntry({ id: 'x', name: 'X', description: 'd', whenToUse, protocolVersion: '1.0.0' }, PROTOCOL_TOOL);
    whenToUse.push('b');
    expect(entry.whenToUse).toEqual(['a']);
  });
});

describe('tool names and the prefix rule', () => {
  it('toolNames(prefix) prefixes every base tool and nothing else', () => {
    for (const prefix of ['', 'yi_', 'A.b-c_', 'x'.repeat(64)]) {
      const names = toolNames(prefix);
      expect(Object.keys(names)).toEqual(Object.keys(BASE_TOOL_NAMES));
      for (const key of Object.keys(BASE_TOOL_NAMES) as (keyof typeof BASE_TOOL_NAMES)[]) expect(names[key]).toBe(`${prefix}${BASE_TOOL_NAMES[key]}`);
    }
    expect(PROTOCOL_TOOL).toBe(BASE_TOOL_NAMES.getCapabilityProtocol);
  });

  it('refuses the same prefixes in the server and in the skill, with one message', () => {
    for (const prefix of ['-x', '.x', 'a b', 'x'.repeat(65), 'ä_', 'a/b', 'a\n']) {
      expect(isValidToolPrefix(prefix)).toBe(false);
      expect(() => toolNames(prefix)).toThrow(RangeError);
      let skillError: unknown;
      try {
        renderClientSkill({ toolPrefix: prefix });
      } catch (error) {
        skillError = error;
      }
      expect(skillError).toEqual(
        new RangeError(
          `tool prefix ${JSON.stringify(prefix)} may use only letters, digits, "_", "-" and ".", may not start with "-" or ".", at most 64 characters`,
        ),
      );
    }
  });

  it('the client skill names exactly the discovery tools of toolNames(prefix)', () => {
    for (const prefix of ['', 'yi_', 'org.team-']) {
      const names = toolNames(prefix);
      const skill = renderClientSkill({ toolPrefix: prefix });
      const bases = Object.values(BASE_TOOL_NAMES).join('|');
      const named = new Set([...skill.matchAll(new RegExp(`\`([A-Za-z0-9_.-]*(?:${bases}))\``, 'g'))].map((match) => match[1]));
      expect([...named].sort()).toEqual([names.findCapabilities, names.getCapabilityProtocol, names.getCurrentUser, names.listCapabilities].sort());
    }
  });
});

describe('the capability link scheme', () => {
  it('reads and writes `capability:` links the same way', () => {
    expect(CAPABILITY_SCHEME).toBe('capability:');
    for (const id of ['alpha', 'user:abc', '', 'a b']) expect(capabilityTarget(capabilityLink(id))).toBe(id);
    for (const url of ['https://x', 'Capability:alpha', ' capability:alpha', '#capability:alpha']) expect(capabilityTarget(url)).toBeUndefined();
  });

  it('linked capabilities: every link kind, each id once, sorted', () => {
    const range = { line: 1, column: 1, endLine: 1, endColumn: 1 };
    const links: LinkRef[] = [
      { kind: 'link', url: 'capability:zeta', text: '', range },
      { kind: 'image', url: 'capability:alpha', text: '', range },
      { kind: 'definition', url: 'capability:mid', text: '', range },
      { kind: 'link', url: 'capability:zeta', text: '', range },
      { kind: 'link', url: 'https://example.com', text: '', range },
    ];
    expect(linkedCapabilities(links)).toEqual(['alpha', 'mid', 'zeta']);
  });

  it('the manifest lists the linked capabilities as references', () => {
    const manifest = manifestOf(FILES);
    expect(manifest.capabilities.find((capability) => capability.id === 'alpha')?.references).toEqual(['beta']);
  });
});

describe('the package version', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };

  it('is package.json’s version', () => {
    expect(CAPREG_VERSION).toBe(pkg.version);
  });

  it('bin/capreg.js --version works from another working directory', () => {
    expect(runBin(['--version'], { cwd: os.tmpdir() })).toEqual({ code: 0, stdout: `${pkg.version}\n`, stderr: '' });
  });
});

describe('one home', () => {
  // Code (comments and prose in messages aside) outside compiler/contract.ts names no tool, no link
  // scheme, no prefix rule and never reads package.json for the version.
  const FORBIDDEN: [string, RegExp][] = [
    // A quoted name, or a name right after an interpolation (`${prefix}list_capabilities`).
    ['a tool name literal', new RegExp(`(['"])(?:${Object.values(BASE_TOOL_NAMES).join('|')})\\1|\\}(?:${Object.values(BASE_TOOL_NAMES).join('|')})\\b`)],
    ['the capability: scheme literal', /(['"])capability:\1|`capability:\$\{/],
    ['the tool prefix pattern', /\[A-Za-z0-9_\]\[A-Za-z0-9_\.-\]/],
    ['the version read from package.json', /version\s*[=:][^\n]*package\.json|package\.json[^\n]*\.version/],
  ];
  const sources = ['compiler', 'server', 'cli'].flatMap((folder) =>
    (fs.readdirSync(path.join(REPO_ROOT, folder), { recursive: true }) as string[])
      .filter((file) => file.endsWith('.ts'))
      .map((file) => path.join(folder, file)),
  );

  it.each(FORBIDDEN)('no source file but compiler/contract.ts holds %s', (_label, pattern) => {
    const offenders = sources
      .filter((file) => file !== path.join('compiler', 'contract.ts'))
      .filter((file) => {
        const code = fs
          .readFileSync(path.join(REPO_ROOT, file), 'utf8')
          .split('\n')
          .filter((line) => !/^\s*(?:\/\/|\/?\*)/.test(line))
          .join('\n');
        return pattern.test(code);
      });
    expect(offenders).toEqual([]);
  });
});
