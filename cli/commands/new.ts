// capreg new <id>: scaffold capabilities/<id>/PROTOCOL.md that passes lint.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { CAPABILITY_ID_PATTERN, scaffoldProtocol } from '../../compiler/scaffold.js';
import { UsageError, type Command } from '../context.js';
import { parseCommandArgs } from '../options.js';
import { findRegistryRoot } from '../root.js';

export const newCommand: Command = async (argv, context) => {
  const { values, positionals } = parseCommandArgs('new', argv, { root: { type: 'string' } }, true);
  const [id, ...extra] = positionals;
  if (id === undefined || extra.length > 0) throw new UsageError('usage: capreg new <id> [--root DIR]');
  if (!CAPABILITY_ID_PATTERN.test(id) || id.length > 64) {
    throw new UsageError(`"${id}" is not a valid capability id: use lowercase letters and digits in words joined by single hyphens, at most 64 characters`);
  }
  const root = findRegistryRoot(context.cwd, values.root);
  const folder = path.join(root, 'capabilities', id);
  const today = (context.env.SOURCE_DATE_EPOCH ? new Date(Number(context.env.SOURCE_DATE_EPOCH) * 1000) : new Date()).toISOString().slice(0, 10);
  await mkdir(folder, { recursive: true });
  try {
    await writeFile(path.join(folder, 'PROTOCOL.md'), scaffoldProtocol(id, today), { flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw new UsageError(`capabilities/${id}/PROTOCOL.md already exists`);
    throw error;
  }
  context.stdout(`created capabilities/${id}/PROTOCOL.md\nnext: fill it in, then run \`capreg lint\`\n`);
  return 0;
};
