// capreg new <id>: scaffold capabilities/<id>/PROTOCOL.md that passes lint.
// Imports nothing of the parser or the rules: scaffolding is a couple of file writes and should take
// a node start-up, not a compiler load.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { TOOLSETS_FILE, TOOLSETS_FOLDER } from '../../compiler/layout.js';
import { CAPABILITY_ID_PATTERN, scaffoldProtocol } from '../../compiler/scaffold.js';
import { parseFlags } from '../command-table.js';
import { UsageError, type Command } from '../context.js';
import { builtAtFrom } from '../options.js';
import { findRegistryRoot } from '../root.js';

const EMPTY_TOOLSETS = `# Toolsets of this registry: <toolset-id>: {description, tools: {<tool>: {action, description, states}}}.
{}
`;

export const newCommand: Command = async (argv, context) => {
  const { values, positionals } = parseFlags('new', argv);
  const [id, ...extra] = positionals;
  if (id === undefined || extra.length > 0) throw new UsageError('usage: capreg new <id> [--root DIR]');
  if (!CAPABILITY_ID_PATTERN.test(id) || id.length > 64) {
    throw new UsageError(`"${id}" is not a valid capability id: use lowercase letters and digits in words joined by single hyphens, at most 64 characters`);
  }
  if (`capabilities/${id}` === TOOLSETS_FOLDER) {
    throw new UsageError(`"${id}" cannot be a capability id: ${TOOLSETS_FOLDER}/ holds split toolsets files; choose another id`);
  }
  const root = findRegistryRoot(context.cwd, values.root);
  const folder = path.join(root, 'capabilities', id);
  const today = (builtAtFrom(context.env) ?? new Date().toISOString()).slice(0, 10);
  await mkdir(folder, { recursive: true });
  try {
    await writeFile(path.join(folder, 'PROTOCOL.md'), scaffoldProtocol(id, today), { flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw new UsageError(`capabilities/${id}/PROTOCOL.md already exists`);
    throw error;
  }
  context.stdout(`created capabilities/${id}/PROTOCOL.md\n`);
  // A registry without toolsets.yaml fails lint; a fresh registry gets an empty one so the
  // scaffold passes as promised.
  try {
    await writeFile(path.join(root, TOOLSETS_FILE), EMPTY_TOOLSETS, { flag: 'wx' });
    context.stdout(`created ${TOOLSETS_FILE} (no toolsets yet)\n`);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  context.stdout('next: fill it in, then run `capreg lint`\n');
  return 0;
};
