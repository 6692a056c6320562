// How `up` was started, kept for `down`: <data dir>/up.json (the folder, the app, the ports, the
// configuration file, the pid of the process running the emulator `up` started), and a pointer from
// the folder to that data dir in the user's state directory, so that `down DIR` (or `down` in the
// folder) needs no other flag whatever --data-dir `up` was given.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

const RECORD_FILE = 'up.json';

export interface UpRecord {
  /** The project folder (absolute). */
  dir: string;
  app: string;
  dataDir: string;
  /** The configuration file `up` read (absolute), null for none. */
  configFile: string | null;
  port: number | null;
  routerPort: number | null;
  sshPort: number | null;
  apiUrl: string;
  /** The process running the emulator `up` started (the background one, or `up` itself): what `down` stops. */
  emulatorPid: number | null;
}

export function writeUpRecord(record: UpRecord, env: NodeJS.ProcessEnv): void {
  writeJson(join(record.dataDir, RECORD_FILE), record);
  const pointer = pointerFile(record.dir, env);
  mkdirSync(join(pointer, '..'), { recursive: true, mode: 0o700 });
  writeJson(pointer, { dir: record.dir, dataDir: record.dataDir });
}

export function readUpRecord(dataDir: string): UpRecord | null {
  const value = readJson(join(dataDir, RECORD_FILE)) as Partial<UpRecord> | null;
  if (!value || typeof value.dir !== 'string' || typeof value.app !== 'string') return null;
  const num = (v: unknown) => (typeof v === 'number' ? v : null);
  return {
    dir: value.dir,
    app: value.app,
    dataDir,
    configFile: typeof value.configFile === 'string' ? value.configFile : null,
    port: num(value.port),
    routerPort: num(value.routerPort),
    sshPort: num(value.sshPort),
    apiUrl: typeof value.apiUrl === 'string' ? value.apiUrl : '',
    emulatorPid: num(value.emulatorPid),
  };
}

/** The data dir the last `up` of this folder used, when known. */
export function recordedDataDir(dir: string, env: NodeJS.ProcessEnv): string | null {
  const value = readJson(pointerFile(dir, env)) as { dir?: unknown; dataDir?: unknown } | null;
  return value && value.dir === dir && typeof value.dataDir === 'string' ? value.dataDir : null;
}

/** XDG's state directory (default ~/.local/state): one small file per folder `up` ran. */
function pointerFile(dir: string, env: NodeJS.ProcessEnv): string {
  const base = env.XDG_STATE_HOME || join(homedir(), '.local', 'state');
  const key = createHash('sha256').update(dir).digest('hex').slice(0, 24);
  return join(base, 'scalingo-emulator', 'up', `${key}.json`);
}

function readJson(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return null;
  }
}

function writeJson(file: string, value: unknown): void {
  writeFileSync(`${file}.${process.pid}`, JSON.stringify(value), { mode: 0o600 });
  renameSync(`${file}.${process.pid}`, file);
}
