import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const isRoot = process.getuid?.() === 0;

/**
 * Makes `<dir>/stuck/` a directory whose file the kernel refuses to delete: immutable (chattr +i)
 * for root, whom permissions do not stop, read-only for anyone else. Renaming `dir` still works,
 * deleting it does not (EPERM or EACCES). False where the file system offers neither.
 */
export function plantUnremovable(dir: string): boolean {
  const stuck = join(dir, 'stuck');
  mkdirSync(stuck, { recursive: true });
  writeFileSync(join(stuck, 'held.png'), 'held');
  if (isRoot) return spawnSync('chattr', ['+i', stuck]).status === 0;
  chmodSync(stuck, 0o555);
  return true;
}

/** Undoes plantUnremovable for everything under `root`, wherever it was renamed to. */
export function releaseUnremovable(root: string): void {
  if (isRoot) spawnSync('chattr', ['-R', '-i', root], { stdio: 'ignore' });
  else spawnSync('chmod', ['-R', 'u+w', root], { stdio: 'ignore' });
}
