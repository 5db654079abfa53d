import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

function findRepoRoot(start: string): string {
  let dir = start;
  for (;;) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  // Fall back to this file's location: test/support → repository root.
  return resolve(start, '..', '..');
}

/** The repository root (the nearest directory above this file holding package.json). */
export const repoRoot: string = findRepoRoot(dirname(fileURLToPath(import.meta.url)));
