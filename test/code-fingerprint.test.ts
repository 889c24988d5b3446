// What keys the caches of a compile's results besides capreg's own code (cli/code-fingerprint.ts):
// every package the compiler brings, found as Node finds it, so that an `npm update` that changes
// a parser or the tokenizer is never answered from a record made with the one before.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { COMPILER_PACKAGES, installedPackages } from '../cli/code-fingerprint.js';
import { REPO_ROOT } from './cli/helpers.js';

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'capreg-packages-'));
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

/** The packages a folder of TypeScript sources imports at run time (`import type` aside). */
function importedPackages(folder: string): Set<string> {
  const names = new Set<string>();
  for (const entry of fs.readdirSync(folder, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
    // Type-only imports (over several lines too) bring no code.
    const text = fs.readFileSync(path.join(entry.parentPath, entry.name), 'utf8').replace(/^import type [^;]*;/gm, '');
    for (const [, specifier] of text.matchAll(/(?:from |import\(|require\()'([^'.][^']*)'/g)) {
      if (specifier!.startsWith('node:')) continue;
      const [scope, name] = specifier!.split('/');
      names.add(scope!.startsWith('@') ? `${scope}/${name}` : scope!);
    }
  }
  return names;
}

function writePackage(folder: string, name: string, version: string, dependencies: Record<string, string> = {}): void {
  fs.mkdirSync(path.join(folder, 'node_modules', name), { recursive: true });
  fs.writeFileSync(path.join(folder, 'node_modules', name, 'package.json'), JSON.stringify({ name, version, dependencies }));
}

describe('the packages that key the caches of compile results', () => {
  it('are every package compiler/ imports', () => {
    expect([...importedPackages(path.join(REPO_ROOT, 'compiler'))].sort()).toEqual([...COMPILER_PACKAGES].sort());
  });

  it('are found with everything they depend on, as Node resolves each from its own folder', () => {
    const root = path.join(scratch, 'app');
    writePackage(root, 'parser', '1.0.0', { lexer: '^2.0.0', missing: '^1.0.0' });
    writePackage(root, 'lexer', '1.0.0');
    // The parser's own copy is the one it loads.
    writePackage(path.join(root, 'node_modules', 'parser'), 'lexer', '2.1.0', { 'char-codes': '^1.0.0' });
    writePackage(root, 'char-codes', '1.4.0');
    const from = path.join(root, 'lib', 'cli');
    fs.mkdirSync(from, { recursive: true });
    expect(installedPackages(['parser'], from)).toEqual(['char-codes@1.4.0', 'lexer@2.1.0', 'missing@-', 'parser@1.0.0']);
    // A dependency two levels down updated in place changes them.
    writePackage(root, 'char-codes', '1.4.1');
    expect(installedPackages(['parser'], from)).toContain('char-codes@1.4.1');
  });

  it('are found through links as Node finds them: from where a linked package really is (pnpm)', () => {
    const root = path.join(scratch, 'pnpm');
    const store = path.join(root, 'node_modules', '.pnpm');
    // The store: parser@1.0.0 next to its own lexer@2.1.0; a lexer@1.0.0 hoisted in the store's node_modules.
    writePackage(path.join(store, 'parser@1.0.0'), 'parser', '1.0.0', { lexer: '^2.0.0' });
    writePackage(path.join(store, 'lexer@2.1.0'), 'lexer', '2.1.0');
    fs.symlinkSync(path.join(store, 'lexer@2.1.0', 'node_modules', 'lexer'), path.join(store, 'parser@1.0.0', 'node_modules', 'lexer'));
    writePackage(store, 'lexer', '1.0.0');
    fs.symlinkSync(path.join(store, 'parser@1.0.0', 'node_modules', 'parser'), path.join(root, 'node_modules', 'parser'));
    expect(installedPackages(['parser'], path.join(root, 'lib'))).toEqual(['lexer@2.1.0', 'parser@1.0.0']);
  });

  it('are found for this checkout, with the parser and the tokenizer among them', () => {
    const found = installedPackages(COMPILER_PACKAGES, REPO_ROOT);
    expect(found.some((entry) => entry.startsWith('micromark@'))).toBe(true);
    expect(found.some((entry) => entry.startsWith('gpt-tokenizer@'))).toBe(true);
    expect(found.filter((entry) => entry.endsWith('@-'))).toEqual([]);
  });
});
