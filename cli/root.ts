// Where the registry is: `--root DIR`, else the first folder upwards from the working directory that
// holds capreg.config.yaml or capabilities/. Never the location of capreg's own code.
import { existsSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { UsageError } from './context.js';

function isDirectory(target: string): boolean {
  try {
    return statSync(target).isDirectory();
  } catch {
    return false;
  }
}

/**
 * An input file named on the command line: relative to the working directory, like every Unix
 * tool. A missing one is a usage error that names the flag, what was given and where it was looked for.
 */
export function existingFile(cwd: string, flag: string, given: string): string {
  const file = path.resolve(cwd, given);
  let isFile: boolean;
  try {
    isFile = statSync(file).isFile();
  } catch {
    const where = path.isAbsolute(given) ? '' : ` (a relative path on the command line starts from the working directory, ${cwd})`;
    throw new UsageError(`${flag} ${given}: no such file: ${file}${where}`);
  }
  if (!isFile) throw new UsageError(`${flag} ${given}: ${file} is not a file`);
  return file;
}

export function findRegistryRoot(cwd: string, explicitRoot?: string): string {
  if (explicitRoot !== undefined) {
    const root = path.resolve(cwd, explicitRoot);
    if (!isDirectory(root)) throw new UsageError(`--root ${explicitRoot}: no such directory: ${root}`);
    if (!isDirectory(path.join(root, 'capabilities'))) {
      throw new UsageError(`--root ${explicitRoot}: ${root} has no capabilities/ folder; a registry root holds capabilities/<id>/PROTOCOL.md`);
    }
    return root;
  }
  let current = path.resolve(cwd);
  for (;;) {
    if (existsSync(path.join(current, 'capreg.config.yaml')) || isDirectory(path.join(current, 'capabilities'))) {
      if (!isDirectory(path.join(current, 'capabilities'))) {
        throw new UsageError(`${current} has capreg.config.yaml but no capabilities/ folder`);
      }
      return current;
    }
    const parent = path.dirname(current);
    if (parent === current) {
      throw new UsageError(
        `no registry found: neither ${path.resolve(cwd)} nor any parent folder holds capreg.config.yaml or capabilities/; run inside a registry or pass --root DIR`,
      );
    }
    current = parent;
  }
}

/**
 * `absolute` (a path found from `cwd`, which the system gives with links resolved) as the user's
 * shell names it: from `$PWD`, which keeps the links `cd` went through, when that is the same
 * folder as `cwd`. What the user named can differ from where it leads (`cd reg`, `reg` a link).
 */
export function namedPath(cwd: string, env: NodeJS.ProcessEnv, absolute: string): string {
  const pwd = env['PWD'];
  if (pwd === undefined || !path.isAbsolute(pwd) || pwd === cwd) return absolute;
  try {
    return realpathSync(pwd) === realpathSync(cwd) ? path.resolve(pwd, path.relative(cwd, absolute)) : absolute;
  } catch {
    return absolute;
  }
}
