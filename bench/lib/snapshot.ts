import { cpSync, existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Copies the emulator's code (src/, package.json, config) aside, so every child started during a
 * run loads the same code even while other developers edit the tree. node_modules is linked.
 */
export function snapshotTree(repoDir: string): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'bench-code-'));
  cpSync(join(repoDir, 'src'), join(dir, 'src'), { recursive: true });
  cpSync(join(repoDir, 'scripts'), join(dir, 'scripts'), { recursive: true });
  for (const f of ['package.json', 'package-lock.json', 'emulator.config.json', 'tsconfig.json']) {
    if (existsSync(join(repoDir, f))) cpSync(join(repoDir, f), join(dir, f));
  }
  symlinkSync(join(repoDir, 'node_modules'), join(dir, 'node_modules'), 'dir');
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
