// Where the docker CLI would find the engine when neither the configuration nor DOCKER_HOST says: the current
// docker context (DOCKER_CONTEXT, else `currentContext` of ~/.docker/config.json; its endpoint in
// ~/.docker/contexts/meta/<sha256 of the name>/meta.json, its TLS files in ~/.docker/contexts/tls/<same>/docker),
// then Docker Desktop's per-user socket ~/.docker/run/docker.sock (macOS, and Linux's Docker Desktop), then the
// system socket (docs.docker.com/engine/manage-resources/contexts/, "docker context").
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface ContextEngine {
  /** `unix:///…` or `tcp://…` */
  host: string;
  /** The context's TLS directory (ca.pem, cert.pem, key.pem) when it has one. */
  certPath?: string;
  /** What chose it, for errors: `docker context "desktop-linux"`. */
  source: string;
}

/** DOCKER_CONFIG's directory (the docker CLI's variable), else ~/.docker. */
export const dockerConfigDir = (env: NodeJS.ProcessEnv, home: string): string =>
  env.DOCKER_CONFIG || join(home, '.docker');

/** The current context's engine, or null when the context is `default` (or none is set, or it cannot be read). */
export function currentContextEngine(env: NodeJS.ProcessEnv, home: string): ContextEngine | null {
  const dir = dockerConfigDir(env, home);
  const name = env.DOCKER_CONTEXT || readJson(join(dir, 'config.json'))?.currentContext;
  if (typeof name !== 'string' || !name || name === 'default') return null;
  const metaRoot = join(dir, 'contexts', 'meta');
  let entries: string[] = [];
  try {
    entries = readdirSync(metaRoot);
  } catch {
    return null;
  }
  for (const id of entries) {
    const meta = readJson(join(metaRoot, id, 'meta.json'));
    if (meta?.Name !== name) continue;
    const host = meta?.Endpoints?.docker?.Host;
    if (typeof host !== 'string' || !host) return null;
    const tls = join(dir, 'contexts', 'tls', id, 'docker');
    return { host, source: `docker context "${name}"`, ...(existsSync(join(tls, 'ca.pem')) ? { certPath: tls } : {}) };
  }
  return null;
}

/** Docker Desktop's per-user socket when it exists. */
export function desktopSocket(env: NodeJS.ProcessEnv, home: string): string | null {
  const socket = join(dockerConfigDir(env, home), 'run', 'docker.sock');
  return existsSync(socket) ? socket : null;
}

// biome-ignore lint/suspicious/noExplicitAny: a JSON file of the docker CLI, read field by field with checks
function readJson(file: string): any {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return null;
  }
}
