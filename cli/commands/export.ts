// capreg export --format agent-skills --out DIR: the verified manifest's capabilities as Agent
// Skills folders (docs/skills.md), optionally only those a principal or a set of scopes may see.
// The files are decided in memory (compiler/agent-skill-export.ts), written to a temporary folder
// next to DIR, and renamed into place in one step: DIR is the old export or the new one, never half.
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { planAgentSkillsExport } from '../../compiler/agent-skill-export.js';
import { parseManifest } from '../../compiler/manifest.js';
import type { Manifest } from '../../compiler/types.js';
import { canUse, Grants, parseScope, SCOPE_FORMAT } from '../../server/permissions.js';
import { parsePrincipals } from '../../server/principals.js';
import { DEFAULT_READ_LIMITS, readBounded } from '../../server/read-file.js';
import { defaultManifestFile, outputLinkProblem } from '../build-outputs.js';
import { parseFlags } from '../command-table.js';
import { UsageError, type Command } from '../context.js';
import { existingFile, findRegistryRoot } from '../root.js';
import { plainText } from '../../compiler/formatters/escape.js';

export const EXPORT_FORMATS = ['agent-skills'] as const;
/**
 * Written into every export: the revision, then each file the export wrote. A later export replaces
 * the folder only while it holds nothing else (an older capreg's marker lists nothing).
 */
export const EXPORT_MARKER = '.capreg-export';

export const exportCommand: Command = async (argv, context) => {
  const { values } = parseFlags('export', argv);
  if (values.format === undefined) throw new UsageError(`--format is required: ${EXPORT_FORMATS.join(', ')}`);
  if (!(EXPORT_FORMATS as readonly string[]).includes(values.format))
    throw new UsageError(`unknown --format ${JSON.stringify(values.format)}; use ${EXPORT_FORMATS.join(', ')}`);
  if (values.out === undefined) throw new UsageError('--out DIR is required: the folder to write the skills to');
  if (values.as !== undefined && values.principals === undefined) throw new UsageError('--as ID needs --principals FILE');
  if (values.principals !== undefined && values.as === undefined) throw new UsageError('--principals FILE needs --as ID: the principal whose view to export');
  if (values.scopes !== undefined && values.as !== undefined) throw new UsageError('give either --as ID or --scopes S, not both');
  const root = values.manifest === undefined ? findRegistryRoot(context.cwd, values.root) : context.cwd;
  const manifestFile = values.manifest === undefined ? defaultManifestFile(root) : existingFile(context.cwd, '--manifest', values.manifest);
  // The default manifest is in the repository's files: a link there could lead anywhere.
  const linkProblem = values.manifest === undefined ? outputLinkProblem(root, manifestFile) : undefined;
  if (linkProblem !== undefined) throw new UsageError(`cannot read the manifest ${manifestFile}: ${linkProblem}; run \`capreg build\` first`);
  const manifest = await readManifest(manifestFile);
  const grants = await grantsFrom(values, context.cwd);
  const capabilities = manifest.capabilities.filter(
    (capability) =>
      typeof capability.protocol === 'string' && capability.protocol.trim() !== '' && (grants === undefined || canUse(grants, capability.requiredToolsets)),
  );
  const plan = planAgentSkillsExport(manifest, capabilities, { marketplace: values.marketplace === true });
  if (!plan.ok) {
    for (const problem of plan.problems) context.stderr(`capreg export: ${plainText(problem)}\n`);
    context.stderr('capreg export: nothing was written\n');
    return 1;
  }
  const out = path.resolve(context.cwd, values.out);
  const marker = [manifest.revision, ...plan.files.map((file) => file.path)].join('\n');
  await replaceFolder(out, [...plan.files, { path: EXPORT_MARKER, content: `${marker}\n` }]);
  context.stderr(`capreg export: wrote ${plan.skills.length} skill${plan.skills.length === 1 ? '' : 's'} to ${out} (revision ${manifest.revision})\n`);
  return 0;
};

async function readManifest(file: string): Promise<Manifest> {
  const read = await readBounded(file, DEFAULT_READ_LIMITS);
  if (!read.ok) throw new UsageError(`cannot read the manifest ${file}: ${read.reason}; run \`capreg build\` first`);
  const parsed = parseManifest(read.text);
  if (!parsed.ok) throw new UsageError(`the manifest ${file} is not valid: ${parsed.error}`);
  return parsed.manifest;
}

/** The grants whose view is exported; undefined exports every capability. */
async function grantsFrom(
  values: { principals?: string | undefined; as?: string | undefined; scopes?: string | undefined },
  cwd: string,
): Promise<Grants | undefined> {
  if (values.scopes !== undefined) {
    const scopes = values.scopes
      .split(',')
      .map((scope) => scope.trim())
      .filter((scope) => scope !== '');
    // Grants skips what is no scope (a token's `openid`): here it is a typo, and would export less without a word.
    const malformed = scopes.find((scope) => parseScope(scope) === undefined);
    if (malformed !== undefined) throw new UsageError(`--scopes has ${JSON.stringify(plainText(malformed))}; expected ${SCOPE_FORMAT}`);
    if (scopes.length === 0) throw new UsageError(`--scopes needs at least one scope, ${SCOPE_FORMAT}, comma-separated`);
    return new Grants(scopes);
  }
  if (values.principals === undefined || values.as === undefined) return undefined;
  const file = existingFile(cwd, '--principals', values.principals);
  const read = await readBounded(file, DEFAULT_READ_LIMITS);
  if (!read.ok) throw new UsageError(`cannot read the principals file ${file}: ${read.reason}`);
  const parsed = parsePrincipals(read.text);
  if (!parsed.ok) throw new UsageError(`the principals file ${file} is not valid: ${parsed.error}`);
  const principal = parsed.registry.findById(values.as);
  if (principal === undefined) throw new UsageError(`no principal with id ${JSON.stringify(values.as)} in ${file}`);
  return new Grants(principal.scopes);
}

/**
 * Writes `files` into a fresh folder beside `out`, then swaps it in. An existing `out` is replaced
 * only when it is empty or an earlier export (it holds the marker): never someone's other folder.
 */
async function replaceFolder(out: string, files: readonly { path: string; content: string }[]): Promise<void> {
  const existing = await folderState(out, files);
  if (existing === 'foreign') throw new UsageError(`${out} exists and is not an earlier export (no ${EXPORT_MARKER}); pick an empty or new --out`);
  if (typeof existing === 'object' && existing.older) {
    throw new UsageError(
      `${out} is an export by an earlier capreg, whose ${EXPORT_MARKER} does not list the files it wrote, and it holds ${plainText(existing.added)}, which this export does not write; replacing the folder would delete it: move it out of ${out}, or pick another --out`,
    );
  }
  if (typeof existing === 'object') {
    throw new UsageError(
      `${out} is an earlier export, but holds ${plainText(existing.added)}, which no export wrote, and replacing the folder would delete it; move it out of ${out}, or pick another --out`,
    );
  }
  const suffix = `${process.pid}-${randomBytes(4).toString('hex')}`;
  const temporary = path.join(path.dirname(out), `.${path.basename(out)}.${suffix}.tmp`);
  const previous = path.join(path.dirname(out), `.${path.basename(out)}.${suffix}.old`);
  try {
    for (const file of files) {
      const target = path.join(temporary, ...file.path.split('/'));
      await mkdir(path.dirname(target), { recursive: true });
      await writeFile(target, file.content);
    }
    if (existing !== 'absent') await rename(out, previous);
    try {
      await rename(temporary, out);
    } catch (error) {
      if (existing !== 'absent') await rename(previous, out);
      throw error;
    }
  } finally {
    await rm(temporary, { recursive: true, force: true });
    await rm(previous, { recursive: true, force: true });
  }
}

/**
 * `added`: an earlier export that holds a file it did not write (a skill of the user's own, say).
 * The marker of an earlier capreg holds the revision alone (`older`): the files this export writes
 * stand for what that one wrote, so an upgrade replaces the same skills without a step by hand.
 */
async function folderState(
  folder: string,
  files: readonly { path: string }[],
): Promise<'absent' | 'replaceable' | 'foreign' | { added: string; older: boolean }> {
  try {
    if (!(await stat(folder)).isDirectory()) return 'foreign';
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'absent';
    throw error;
  }
  const entries = await readdir(folder);
  if (entries.length === 0) return 'replaceable';
  if (!entries.includes(EXPORT_MARKER)) return 'foreign';
  const marker = await readBounded(path.join(folder, EXPORT_MARKER), DEFAULT_READ_LIMITS);
  // CRLF too: an export committed to Git and checked out with core.autocrlf.
  const listed = marker.ok
    ? marker.text
        .split(/\r?\n/)
        .slice(1)
        .filter((line) => line !== '')
    : [];
  const older = marker.ok && listed.length === 0;
  const written = new Set(older ? files.map((file) => file.path) : listed);
  // Every file and link under the folder, `/`-separated as the marker lists them (folders are not listed).
  for (const entry of await readdir(folder, { recursive: true, withFileTypes: true })) {
    if (entry.isDirectory()) continue;
    const relative = path.relative(folder, path.join(entry.parentPath, entry.name)).split(path.sep).join('/');
    if (relative !== EXPORT_MARKER && !written.has(relative)) return { added: relative, older };
  }
  return 'replaceable';
}
