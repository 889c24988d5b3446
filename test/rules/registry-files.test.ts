import { describe, expect, it } from 'vitest';
import { registryFiles } from '../../compiler/rules/registry-files.js';
import type { RegistryInput } from '../../compiler/types.js';
import { protocol, registryInput } from '../support/registry.js';
import { lintWith, ruleTable } from './harness.js';

const A = 'capabilities/alpha/PROTOCOL.md';

ruleTable(registryFiles, {
  valid: [
    { name: 'one capability', files: { [A]: protocol({ id: 'alpha' }) } },
    {
      name: 'extra files in a capability folder',
      files: { [A]: protocol({ id: 'alpha' }), 'capabilities/alpha/references/notes.md': 'Notes.' },
    },
    { name: "a PROTOCOL.md with broken content is the other rules' business", files: { [A]: 'not even frontmatter' } },
  ],
  invalid: [
    {
      name: 'an empty registry',
      files: {},
      errors: [
        {
          messageId: 'empty',
          file: 'capabilities',
          line: 1,
          column: 1,
          message: 'the registry has no capabilities: add capabilities/<id>/PROTOCOL.md (`capreg new <id>` scaffolds one)',
        },
      ],
    },
    {
      name: 'a folder without PROTOCOL.md',
      files: { [A]: protocol({ id: 'alpha' }), 'capabilities/beta/notes.md': 'Notes.' },
      errors: [
        {
          messageId: 'noProtocol',
          file: 'capabilities/beta',
          line: 1,
          column: 1,
          message: 'folder capabilities/beta has no PROTOCOL.md; add one (`capreg new <id>` scaffolds it) or remove the folder',
        },
      ],
    },
    {
      name: 'only folders without PROTOCOL.md: reported as such, not as an empty registry',
      files: { 'capabilities/beta/README.md': 'Notes.' },
      errors: [{ messageId: 'noProtocol', file: 'capabilities/beta', line: 1, column: 1, message: 'folder capabilities/beta has no PROTOCOL.md' }],
    },
  ],
});

function withRefused(refused: RegistryInput['files']): RegistryInput {
  const input = registryInput({ [A]: protocol({ id: 'alpha' }) });
  input.files.push(...refused);
  input.allPaths.push(...refused.map((file) => file.path));
  return input;
}

describe('rule registry-files: files the CLI refused to read', () => {
  it('reports each with its reason, at the place of the problem when it has one', () => {
    const diagnostics = lintWith(
      registryFiles,
      withRefused([
        { path: 'capabilities/beta/PROTOCOL.md', problem: 'file is binary (NUL byte at offset 40); it must be UTF-8 text', problemAt: { line: 3, column: 7 } },
        { path: 'capabilities/gamma/PROTOCOL.md', problem: 'file is 2.0 MiB, over the 1.0 MiB limit (limits.maxFileBytes in capreg.config.yaml)' },
        { path: 'capabilities/toolsets.yaml', problem: 'symbolic link points outside the registry root (to /etc/passwd); refused' },
      ]),
    );
    expect(diagnostics.map((d) => `${d.file}:${d.line}:${d.column} ${d.severity} ${d.ruleId} ${d.message}`)).toEqual([
      'capabilities/beta/PROTOCOL.md:3:7 error registry-files file is binary (NUL byte at offset 40); it must be UTF-8 text',
      'capabilities/gamma/PROTOCOL.md:1:1 error registry-files file is 2.0 MiB, over the 1.0 MiB limit (limits.maxFileBytes in capreg.config.yaml)',
      'capabilities/toolsets.yaml:1:1 error registry-files symbolic link points outside the registry root (to /etc/passwd); refused',
    ]);
  });

  it('does not call a registry empty when its only PROTOCOL.md was refused', () => {
    const input: RegistryInput = {
      files: [
        { path: A, problem: 'file is not valid UTF-8 text' },
        { path: 'capabilities/toolsets.yaml', content: '{}\n' },
      ],
      allPaths: [A, 'capabilities/toolsets.yaml'],
      foldersWithoutProtocol: [],
    };
    expect(lintWith(registryFiles, input).map((d) => d.message)).toEqual(['file is not valid UTF-8 text']);
  });

  it('is a warning when configured so', () => {
    const diagnostics = lintWith(registryFiles, withRefused([{ path: 'capabilities/beta/PROTOCOL.md', problem: 'file is binary' }]), {}, 'warn');
    expect(diagnostics.map((d) => d.severity)).toEqual(['warning']);
  });
});

describe('rule registry-files: files named nearly as one capreg reads', () => {
  it('warns at each, naming the file capreg reads instead; names it reads, and other files, are left alone', () => {
    const input = registryInput({
      [A]: protocol({ id: 'alpha' }),
      'capabilities/alpha/evals.yml': 'shouldMatch: [x]\n',
      'capabilities/alpha/EVALS.yaml': 'shouldMatch: [x]\n',
      'capabilities/alpha/references/PROTOCOL.md': 'A reference.\n',
      'capabilities/alpha/references/evals.yml': 'not a capability folder\n',
      'capabilities/alpha/references/notes.md': 'Notes.\n',
      'capabilities/beta/protocol.md': 'lower case\n',
      'capabilities/toolsets.yml': 'x: {}\n',
      'capabilities/toolsets/billing.yml': 'x: {}\n',
      'capabilities/toolsets/README.md': 'About the toolsets.\n',
      // Found by an attack pass: a toolsets file in a folder below capabilities/toolsets/ was skipped without a word.
      'capabilities/toolsets/billing/invoices.yaml': 'x: {}\n',
      'capabilities/toolsets/old/billing.yml': 'x: {}\n',
    });
    const found = lintWith(registryFiles, input).filter((d) => d.messageId !== 'noProtocol');
    expect(found.map((d) => `${d.file} ${d.severity} ${d.message}`)).toEqual([
      'capabilities/alpha/EVALS.yaml warning capreg does not read this file: it reads capabilities/alpha/evals.yaml; rename it, or remove it',
      'capabilities/alpha/evals.yml warning capreg does not read this file: it reads capabilities/alpha/evals.yaml; rename it, or remove it',
      'capabilities/alpha/references/PROTOCOL.md warning a PROTOCOL.md below a capability folder is not a capability and is not read: only capabilities/<id>/PROTOCOL.md is; move it there, or give it another name if it is a reference',
      'capabilities/beta/protocol.md warning capreg does not read this file: it reads capabilities/beta/PROTOCOL.md; rename it, or remove it',
      'capabilities/toolsets.yml warning capreg does not read this file: it reads capabilities/toolsets.yaml; rename it, or remove it',
      'capabilities/toolsets/billing.yml warning capreg does not read this file: it reads capabilities/toolsets/billing.yaml; rename it, or remove it',
      'capabilities/toolsets/billing/invoices.yaml warning capreg does not read this file: it reads capabilities/toolsets/invoices.yaml; rename it, or remove it',
      'capabilities/toolsets/old/billing.yml warning capreg does not read this file: it reads capabilities/toolsets/billing.yaml; rename it, or remove it',
    ]);
  });
});
