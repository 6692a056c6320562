import { chmodSync, existsSync, mkdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { ancestorProblem, privateDirProblem } from './code-cache-dir.ts';

// What the single executable (src/boot/exe-entry.ts) does before it runs the emulator: where its files go, how they are
// written, and when it stands for `node`. Node builtins only: it is bundled into the executable's main script.

/** One file of the payload: its path in the tree, where its bytes are in the payload asset, whether it is executable. */
export interface PayloadFile {
  path: string;
  offset: number;
  size: number;
  exec: boolean;
}

export interface PayloadManifest {
  /** The payload's content hash: the tree's directory name, so that two builds never share one. */
  hash: string;
  files: PayloadFile[];
}

/**
 * Where the executable keeps its files: `EMULATOR_EXE_CACHE_DIR`, else the user's cache (`$XDG_CACHE_HOME` or
 * `~/.cache`, then `scalingo-emulator/exe`). What is there is code the executable runs, so the directory has the code
 * cache's trust rules (src/boot/code-cache-dir.ts); unlike the code cache, which can be done without, the executable
 * cannot run without it, so a directory that breaks them is an error.
 */
export function exeCacheDir(env: NodeJS.ProcessEnv = process.env): { dir: string } | { dir: null; reason: string } {
  const dir =
    env.EMULATOR_EXE_CACHE_DIR || join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'scalingo-emulator', 'exe');
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (err) {
    return { dir: null, reason: `cannot create ${dir}: ${(err as Error).message}` };
  }
  const problem = privateDirProblem(dir) ?? ancestorProblem(dir);
  return problem ? { dir: null, reason: `${dir} ${problem}` } : { dir };
}

/**
 * Writes the payload's tree under `base` once (a stage renamed into place: never a half-written tree) and returns it;
 * `readPayload` is called only when the tree is not there yet (reading the asset copies it).
 */
export function unpack(base: string, manifest: PayloadManifest, readPayload: () => Buffer): string {
  const tree = join(base, manifest.hash);
  if (existsSync(join(tree, 'package.json'))) return tree;
  const payload = readPayload();
  const stage = join(base, `.${manifest.hash}.${process.pid}.tmp`);
  rmSync(stage, { recursive: true, force: true });
  try {
    for (const f of manifest.files) {
      const path = join(stage, f.path);
      mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
      writeFileSync(path, payload.subarray(f.offset, f.offset + f.size), { mode: f.exec ? 0o700 : 0o600 });
    }
    chmodSync(stage, 0o700);
    renameSync(stage, tree);
  } catch (err) {
    rmSync(stage, { recursive: true, force: true });
    // Another start of the same executable placed it first: its copy serves.
    if (!existsSync(join(tree, 'package.json'))) throw err;
  }
  return tree;
}

/**
 * The executable stands for `node` where the emulator runs its own Node on a script (`process.execPath` with a file:
 * the git pre-receive hook, the snapshot check's child, Yarn and pnpm for app builds): a first argument naming a file,
 * after node options, runs that file. The emulator's own commands take no file first.
 */
export function scriptArgs(args: string[]): { flags: string[]; script: string; rest: string[] } | null {
  let i = 0;
  while (i < args.length && /^--[a-z]/.test(args[i]) && args[i].includes('=')) i++;
  const script = args[i];
  if (script === undefined || script.startsWith('-')) return null;
  const st = statSync(script, { throwIfNoEntry: false });
  return st?.isFile() ? { flags: args.slice(0, i), script, rest: args.slice(i + 1) } : null;
}
