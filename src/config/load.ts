import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { type z } from 'zod';
import { type ConfigInput, configSchema, type EmulatorConfig } from './schema.ts';

export const DEFAULT_CONFIG_FILE = 'emulator.config.json';

/** Raised with every problem found, each in plain words: where, which key, what is expected. */
export class ConfigError extends Error {
  constructor(public readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

type Json = Record<string, unknown>;

// Environment variables, each mapped to a config key. Values are parsed as the schema expects.
const ENV_KEYS: Record<string, { path: string[]; kind: 'string' | 'int' | 'bool' }> = {
  EMULATOR_HOST: { path: ['host'], kind: 'string' },
  EMULATOR_PUBLIC_HOST: { path: ['publicHost'], kind: 'string' },
  EMULATOR_PORT: { path: ['port'], kind: 'int' },
  EMULATOR_ROUTER_PORT: { path: ['routerPort'], kind: 'int' },
  EMULATOR_SSH_PORT: { path: ['sshPort'], kind: 'int' },
  EMULATOR_DATA_DIR: { path: ['dataDir'], kind: 'string' },
  EMULATOR_IN_MEMORY: { path: ['inMemory'], kind: 'bool' },
  EMULATOR_LOG_LEVEL: { path: ['logLevel'], kind: 'string' },
  EMULATOR_RATE_LIMIT: { path: ['rateLimit', 'enabled'], kind: 'bool' },
  EMULATOR_ADMIN_TOKEN: { path: ['adminToken'], kind: 'string' },
  EMULATOR_CLOCK: { path: ['clock'], kind: 'string' },
  EMULATOR_DOCKER_HOST: { path: ['docker', 'host'], kind: 'string' },
  EMULATOR_DOCKER_SOCKET: { path: ['docker', 'socketPath'], kind: 'string' },
  EMULATOR_DOCKER_CERT_PATH: { path: ['docker', 'tls', 'certPath'], kind: 'string' },
  EMULATOR_DOCKER_PUBLISH_HOST: { path: ['docker', 'publishHost'], kind: 'string' },
  EMULATOR_DOCKER_NETWORK: { path: ['docker', 'network'], kind: 'string' },
  EMULATOR_STOP_CONTAINERS_ON_EXIT: { path: ['docker', 'stopContainersOnExit'], kind: 'bool' },
  EMULATOR_DOCKER_MODE: { path: ['docker', 'mode'], kind: 'string' },
  EMULATOR_DOCKER_ONE_OFF_NODE: { path: ['docker', 'swarm', 'oneOffNode'], kind: 'string' },
  EMULATOR_IMAGES_SOURCE: { path: ['images', 'source'], kind: 'string' },
  EMULATOR_BUILDS_NETWORK: { path: ['builds', 'network'], kind: 'string' },
  EMULATOR_VALIDATE_RESPONSES: { path: ['validateResponses'], kind: 'bool' },
};

export interface LoadOptions {
  /** Explicit config file (--config / EMULATOR_CONFIG). It must exist. */
  file?: string;
  /** Working directory where emulator.config.json is looked up. */
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Values from CLI flags or a test harness: highest precedence. */
  overrides?: ConfigInput | Json;
  /** Skip reading emulator.config.json from cwd (tests). */
  ignoreDefaultFile?: boolean;
  /** Defaults of a command, below the file (e.g. `exec`: port 0, in memory). */
  defaults?: ConfigInput | Json;
}

export function loadConfig(opts: LoadOptions = {}): EmulatorConfig {
  const env = opts.env ?? process.env;
  const cwd = opts.cwd ?? process.cwd();
  const problems: string[] = [];

  let fromFile: Json = {};
  let source = 'defaults';
  const explicit = opts.file ?? env.EMULATOR_CONFIG;
  const file = explicit
    ? resolve(cwd, explicit)
    : opts.ignoreDefaultFile
      ? undefined
      : resolve(cwd, DEFAULT_CONFIG_FILE);
  if (file && (explicit || existsSync(file))) {
    source = file;
    try {
      const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
        problems.push(`${file}: the root must be a JSON object`);
      } else {
        fromFile = parsed as Json;
        delete fromFile.$schema;
      }
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      problems.push(e.code === 'ENOENT' ? `${file}: file not found` : `${file}: ${e.message}`);
    }
  }

  const fromEnv: Json = {};
  for (const [name, spec] of Object.entries(ENV_KEYS)) {
    const raw = env[name];
    if (raw === undefined || raw === '') continue;
    let value: unknown = raw;
    if (spec.kind === 'int') {
      value = /^\d+$/.test(raw) ? Number(raw) : NaN;
      if (Number.isNaN(value)) problems.push(`environment ${name}: expected a whole number, got "${raw}"`);
    } else if (spec.kind === 'bool') {
      if (!/^(true|false|1|0)$/i.test(raw)) problems.push(`environment ${name}: expected true or false, got "${raw}"`);
      value = /^(true|1)$/i.test(raw);
    }
    setPath(fromEnv, spec.path, value);
  }

  if (problems.length) throw new ConfigError(problems);

  const merged = deepMerge(
    deepMerge(deepMerge((opts.defaults ?? {}) as Json, fromFile), fromEnv),
    (opts.overrides ?? {}) as Json,
  );
  // Parsed once a process: zod's compiled fast path (code generated with `new Function` at an object schema's
  // first parse) would cost more to build than it saves here (~5 ms of a start); request bodies keep it.
  const result = configSchema.safeParse(merged, { jitless: true });
  if (!result.success) throw new ConfigError(result.error.issues.map((i) => describeIssue(i, source)));
  return result.data;
}

function describeIssue(issue: z.core.$ZodIssue, source: string): string {
  const key = issue.path.length
    ? issue.path
        .map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`))
        .join('')
        .replace(/^\./, '')
    : '(root)';
  let msg = issue.message;
  if (issue.code === 'unrecognized_keys') msg = `unknown key(s) ${issue.keys.map((k) => `"${k}"`).join(', ')}`;
  return `${source}: ${key}: ${msg}`;
}

function setPath(target: Json, path: string[], value: unknown): void {
  let node = target;
  for (const key of path.slice(0, -1)) node = (node[key] ??= {}) as Json;
  node[path[path.length - 1]] = value;
}

function isPlainObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Objects merge key by key; arrays and scalars from `over` replace those of `base`. */
export function deepMerge(base: Json, over: Json): Json {
  const out: Json = { ...base };
  for (const [k, v] of Object.entries(over)) {
    if (v === undefined) continue;
    out[k] = isPlainObject(v) && isPlainObject(out[k]) ? deepMerge(out[k] as Json, v) : v;
  }
  return out;
}
