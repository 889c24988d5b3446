// A watch session (cli/compile-session.ts) reads and parses only the paths it is told changed, and
// keeps derived facts between compiles. After any sequence of edits, it must give exactly what a
// cold compile of the registry as it is now gives: the same diagnostics, in order, and the same
// manifest bytes. The edits are random (fast-check) and real: files written, removed and folders
// made on disk, each announced the way the watcher announces it.
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileRegistry, emitManifest } from '../../compiler/compile.js';
import { serializeManifest } from '../../compiler/manifest.js';
import { CompileSession, compareWalkOrder } from '../../cli/compile-session.js';
import { loadConfig } from '../../cli/load-config.js';
import { readRegistry } from '../../cli/read-registry.js';
import { cleanProtocol, tempRegistry, TOOLSETS_YAML } from './helpers.js';
import { runs } from '../support/property.js';

const IDS = ['alpha', 'beta', 'gamma', 'delta'];
const SHARED = 'Confirm the amounts, the dates and the people involved with the user before anything is saved or sent anywhere.';

/** Protocol texts with one problem each (or none), for rules that read one document or several. */
function protocolVariant(id: string, variant: number): string {
  switch (variant) {
    case 0:
      return cleanProtocol(id);
    case 1:
      return cleanProtocol(id, { version: '1.0.1', body: `Call \`work_log_delete\` first.\n\n- Never guess a ${id} entry.` });
    case 2:
      return cleanProtocol(id, { body: `${SHARED}\n\n- Never guess a ${id} entry.` });
    case 3:
      return `---\nid: ${id}\nname: [unclosed\n---\nbody\n`;
    case 4:
      return cleanProtocol(id, { body: `See [the other](capability:${IDS[(IDS.indexOf(id) + 1) % IDS.length]}) and [notes](notes.md).\n\n- Never guess.` });
    case 5:
      return cleanProtocol(id).replace(`keep a ${id} entry`, 'keep a alpha entry');
    default:
      return cleanProtocol(id, { body: `Use \`work_log_record\` to save it.\n\n- Never invent a ${id} detail.` });
  }
}

const TOOLSETS = [TOOLSETS_YAML, `${TOOLSETS_YAML}    work_log_delete: { action: write, description: Delete an entry. }\n`, 'work-logs: [broken\n'];
const EVALS = ['shouldMatch:\n  - keep a new entry\n', 'shouldMatch: 3\n', 'shouldNotMatch:\n  - something else entirely\n'];
const CONFIGS = ['', 'rules:\n  negative-rules: off\n', 'rules:\n  duplicate-content: error\n'];

type Edit =
  | { kind: 'protocol'; cap: number; variant: number }
  | { kind: 'remove-protocol'; cap: number }
  | { kind: 'remove-folder'; cap: number }
  | { kind: 'toolsets'; variant: number }
  | { kind: 'split-toolsets'; variant: number }
  | { kind: 'evals'; cap: number; variant: number }
  | { kind: 'notes'; cap: number; present: boolean }
  | { kind: 'config'; variant: number };

const cap = fc.integer({ min: 0, max: IDS.length - 1 });
const edit: fc.Arbitrary<Edit> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('protocol' as const), cap, variant: fc.integer({ min: 0, max: 6 }) }) },
  fc.record({ kind: fc.constant('remove-protocol' as const), cap }),
  fc.record({ kind: fc.constant('remove-folder' as const), cap }),
  fc.record({ kind: fc.constant('toolsets' as const), variant: fc.integer({ min: 0, max: TOOLSETS.length - 1 }) }),
  fc.record({ kind: fc.constant('split-toolsets' as const), variant: fc.integer({ min: 0, max: TOOLSETS.length - 1 }) }),
  fc.record({ kind: fc.constant('evals' as const), cap, variant: fc.integer({ min: 0, max: EVALS.length - 1 }) }),
  fc.record({ kind: fc.constant('notes' as const), cap, present: fc.boolean() }),
  fc.record({ kind: fc.constant('config' as const), variant: fc.integer({ min: 0, max: CONFIGS.length - 1 }) }),
);

/** Apply an edit on disk and tell the session what a watcher would have seen. */
function apply(root: string, session: CompileSession, change: Edit): void {
  const write = (relative: string, text: string): void => {
    const target = path.join(root, relative);
    const folder = path.dirname(target);
    if (!fs.existsSync(folder)) {
      fs.mkdirSync(folder, { recursive: true });
      session.noteChange(folder, true);
    }
    fs.writeFileSync(target, text);
    session.noteChange(target, false);
  };
  const remove = (relative: string): void => {
    const target = path.join(root, relative);
    if (!fs.existsSync(target)) return;
    const folder = fs.statSync(target).isDirectory();
    if (folder) for (const name of fs.readdirSync(target)) session.noteChange(path.join(target, name), false);
    fs.rmSync(target, { recursive: true, force: true });
    session.noteChange(target, folder);
  };
  const id = (index: number): string => IDS[index]!;
  switch (change.kind) {
    case 'protocol':
      return write(`capabilities/${id(change.cap)}/PROTOCOL.md`, protocolVariant(id(change.cap), change.variant));
    case 'remove-protocol':
      return remove(`capabilities/${id(change.cap)}/PROTOCOL.md`);
    case 'remove-folder':
      return remove(`capabilities/${id(change.cap)}`);
    case 'toolsets':
      return write('capabilities/toolsets.yaml', TOOLSETS[change.variant]!);
    case 'split-toolsets':
      return write('capabilities/toolsets/extra.yaml', TOOLSETS[change.variant]!.replace('work-logs:', 'extra-logs:').replaceAll('work_log', 'extra_log'));
    case 'evals':
      return write(`capabilities/${id(change.cap)}/evals.yaml`, EVALS[change.variant]!);
    case 'notes':
      return change.present ? write(`capabilities/${id(change.cap)}/notes.md`, '# Notes\n') : remove(`capabilities/${id(change.cap)}/notes.md`);
    case 'config':
      fs.writeFileSync(path.join(root, 'capreg.config.yaml'), CONFIGS[change.variant]!);
      return session.noteChange(path.join(root, 'capreg.config.yaml'), false);
  }
}

/** A compile of the registry as it is on disk now, with nothing kept: the reference. */
async function coldCompile(root: string): Promise<{ diagnostics: unknown[]; manifest: string | undefined }> {
  const config = await loadConfig(root);
  const input = readRegistry(root, { maxFileBytes: config.maxFileBytes });
  const result = compileRegistry(input, { config });
  return { diagnostics: result.diagnostics, manifest: manifestOf(result) };
}

function manifestOf(result: ReturnType<typeof compileRegistry>): string | undefined {
  if (result.errorCount > 0) return undefined;
  return serializeManifest(emitManifest(result, { source: null, generator: 'test', builtAt: '2026-12-01T00:00:00Z' }));
}

function startingRegistry(): string {
  return tempRegistry(Object.fromEntries(IDS.map((id) => [`capabilities/${id}/PROTOCOL.md`, cleanProtocol(id)])));
}

describe('CompileSession', () => {
  it('gives what a cold compile gives after every edit of a random sequence', { timeout: 240_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(edit, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 6 }), async (batches) => {
        const root = startingRegistry();
        const session = new CompileSession(root, { cache: false });
        const first = await session.compile();
        expect(first.kind).toBe('full');
        for (const batch of batches) {
          for (const change of batch) apply(root, session, change);
          const compiled = await session.compile();
          const cold = await coldCompile(root);
          expect(compiled.result.diagnostics, JSON.stringify(batch)).toEqual(cold.diagnostics);
          expect(manifestOf(compiled.result), JSON.stringify(batch)).toBe(cold.manifest);
        }
        fs.rmSync(root, { recursive: true, force: true });
      }),
      { numRuns: runs(40) },
    );
  });

  it('reads and parses only the edited file when a protocol changes', async () => {
    const root = startingRegistry();
    const session = new CompileSession(root, { cache: false });
    expect((await session.compile()).parsed).toBe(IDS.length);
    const file = path.join(root, 'capabilities/beta/PROTOCOL.md');
    fs.writeFileSync(file, protocolVariant('beta', 1));
    session.noteChange(file, false);
    const compiled = await session.compile();
    expect({ kind: compiled.kind, read: compiled.read, parsed: compiled.parsed }).toEqual({ kind: 'paths', read: 1, parsed: 1 });
    expect(compiled.result.diagnostics.map((d) => `${d.file} ${d.ruleId}`)).toEqual(['capabilities/beta/PROTOCOL.md unknown-tools']);
  });

  it('reads the whole registry again after a folder or the config changes, parsing only changed protocols', async () => {
    const root = startingRegistry();
    const session = new CompileSession(root, { cache: false });
    await session.compile();
    fs.mkdirSync(path.join(root, 'capabilities/epsilon'));
    fs.writeFileSync(path.join(root, 'capabilities/epsilon/PROTOCOL.md'), cleanProtocol('epsilon'));
    session.noteChange(path.join(root, 'capabilities/epsilon'), true);
    session.noteChange(path.join(root, 'capabilities/epsilon/PROTOCOL.md'), false);
    const compiled = await session.compile();
    expect({ kind: compiled.kind, parsed: compiled.parsed }).toEqual({ kind: 'full', parsed: 1 });
    expect(compiled.result.registry.capabilities.map((c) => c.id)).toEqual([...IDS, 'epsilon'].sort());
  });

  it('places a file reached through a linked folder with a full read, which refuses links out of the root', async () => {
    const root = startingRegistry();
    const outside = tempRegistry({ 'capabilities/zeta/PROTOCOL.md': cleanProtocol('zeta') });
    const session = new CompileSession(root, { cache: false });
    await session.compile();
    fs.symlinkSync(path.join(outside, 'capabilities/zeta'), path.join(root, 'capabilities/zeta'));
    session.noteChange(path.join(root, 'capabilities/zeta/PROTOCOL.md'), false);
    const compiled = await session.compile();
    expect(compiled.kind).toBe('full');
    expect(compiled.result.diagnostics).toEqual((await coldCompile(root)).diagnostics);
    expect(compiled.result.diagnostics.some((d) => d.message.includes('outside the registry root'))).toBe(true);
  });
});

describe('CompileSession: the registry limits hold after each edit', () => {
  /** The starting registry, with a config that sets `limits` (a config edit would be a full read). */
  function limited(limits: string): string {
    const root = startingRegistry();
    fs.writeFileSync(path.join(root, 'capreg.config.yaml'), `limits:\n${limits}`);
    return root;
  }
  const filesIn = (root: string): number => readRegistry(root, { maxFileBytes: 1024 * 1024 }).allPaths.length;

  it('an edit that takes the text over limits.maxTotalBytes fails the compile; undoing it compiles again', async () => {
    const probe = startingRegistry();
    const total = readRegistry(probe, { maxFileBytes: 1024 * 1024 }).files.reduce((sum, file) => sum + Buffer.byteLength(file.content ?? ''), 0);
    const root = limited(`  maxTotalBytes: ${total + 10}\n`);
    const session = new CompileSession(root, { cache: false });
    expect((await session.compile()).kind).toBe('full');
    const file = path.join(root, 'capabilities/beta/PROTOCOL.md');
    const text = fs.readFileSync(file, 'utf8');
    fs.writeFileSync(file, `${text}\nEleven more.\n`);
    session.noteChange(file, false);
    await expect(session.compile()).rejects.toThrow(/come to more than .* over limits\.maxTotalBytes/);
    fs.writeFileSync(file, text);
    session.noteChange(file, false);
    const again = await session.compile();
    expect(again.result.diagnostics).toEqual((await coldCompile(root)).diagnostics);
    // Ten bytes more fit: the edit is placed on its own.
    fs.writeFileSync(file, `${text}0123456789`);
    session.noteChange(file, false);
    expect((await session.compile()).kind).toBe('paths');
  });

  it('a file added over limits.maxFiles fails the compile; removing it compiles again', async () => {
    const root = limited('  maxFiles: 1\n');
    fs.writeFileSync(path.join(root, 'capreg.config.yaml'), `limits:\n  maxFiles: ${filesIn(root)}\n`);
    const session = new CompileSession(root, { cache: false });
    await session.compile();
    const notes = path.join(root, 'capabilities/alpha/notes.md');
    fs.writeFileSync(notes, 'notes\n');
    session.noteChange(notes, false);
    await expect(session.compile()).rejects.toThrow(/holds more than \d+ files, over limits\.maxFiles/);
    fs.rmSync(notes);
    session.noteChange(notes, false);
    expect((await session.compile()).result.diagnostics).toEqual((await coldCompile(root)).diagnostics);
  });
});

describe('compareWalkOrder', () => {
  it("orders paths the way the registry walk meets them (a folder's files before a sibling folder named with a longer prefix)", () => {
    const paths = ['capabilities/a-b/PROTOCOL.md', 'capabilities/a/PROTOCOL.md', 'capabilities/a/evals.yaml', 'capabilities/toolsets.yaml', 'capabilities/a.x'];
    expect([...paths].sort(compareWalkOrder)).toEqual([
      'capabilities/a/PROTOCOL.md',
      'capabilities/a/evals.yaml',
      'capabilities/a-b/PROTOCOL.md',
      'capabilities/a.x',
      'capabilities/toolsets.yaml',
    ]);
  });
});
