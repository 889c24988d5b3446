// Which symbolic links capreg follows: only to a file or folder inside the registry root, and out
// of hidden ones. Its own small module, so that `capreg new` applies the same terms as the
// registry reader without loading the compiler.
import path from 'node:path';
import { isHiddenPath } from '../compiler/layout.js';

function isInside(root: string, target: string): boolean {
  const relative = path.relative(root, target);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

/**
 * Why a symbolic link whose real target is `target` is refused, or undefined when it may be
 * followed: it must stay inside the registry root, and out of hidden files and folders, which are
 * never part of a registry (`.git/config` can hold a CI token; a YAML error would quote it).
 */
export function linkRefusal(realRoot: string, target: string, what: 'file' | 'folder' = 'file'): string | undefined {
  if (!isInside(realRoot, target)) return `symbolic link points outside the registry root (to ${target}); refused: put the ${what} itself inside the registry`;
  const inside = path.relative(realRoot, target);
  if (isHiddenPath(inside.split(path.sep).join('/'))) {
    return `symbolic link points to a hidden file or folder (${inside}); refused: put the ${what} itself inside the registry`;
  }
  return undefined;
}
