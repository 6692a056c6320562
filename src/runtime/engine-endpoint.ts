// Where the Docker engine is, from the configuration (docker.host / docker.socketPath / docker.tls)
// or, when none says, from Docker's own environment (DOCKER_HOST, DOCKER_TLS_VERIFY,
// DOCKER_CERT_PATH), as the docker CLI reads them (docs.docker.com/reference/cli/docker/#environment-variables),
// then the current docker context and Docker Desktop's socket (engine-context.ts), then /var/run/docker.sock.
// A TCP engine is spoken to over TLS with the server certificate verified and a client certificate
// shown (dockerd --tlsverify); plain TCP is only accepted on a loopback address.
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { currentContextEngine, desktopSocket } from './engine-context.ts';

export interface EngineTlsFiles {
  /** A directory holding ca.pem, cert.pem and key.pem (DOCKER_CERT_PATH layout). */
  certPath?: string;
  ca?: string;
  cert?: string;
  key?: string;
}

export interface EngineConfig {
  /** `unix:///path` or `tcp://host:port`; empty = socketPath, then DOCKER_HOST, then the default socket. */
  host?: string;
  socketPath?: string;
  tls?: EngineTlsFiles;
}

export type EngineEndpoint =
  | { kind: 'socket'; socketPath: string; label: string }
  | { kind: 'tcp'; host: string; port: number; tls: { ca: Buffer; cert: Buffer; key: Buffer } | null; label: string };

export const DEFAULT_SOCKET = '/var/run/docker.sock';
const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|\[::1\]|localhost)$/i;

/**
 * The endpoint named by the configuration, else by Docker's environment variables, else the current docker
 * context, else Docker Desktop's socket, else the system socket. Throws with plain words.
 */
export function resolveEngineEndpoint(
  cfg: EngineConfig,
  env: NodeJS.ProcessEnv = process.env,
  home: string = homedir(),
): EngineEndpoint {
  if (cfg.host) return parseHost(cfg.host, cfg.tls, 'docker.host');
  if (cfg.socketPath) return { kind: 'socket', socketPath: cfg.socketPath, label: `unix://${cfg.socketPath}` };
  if (env.DOCKER_HOST) {
    // As the docker CLI: DOCKER_TLS_VERIFY (any non-empty value) turns verification on, with the
    // files of DOCKER_CERT_PATH (default ~/.docker).
    const verify = !!env.DOCKER_TLS_VERIFY && env.DOCKER_TLS_VERIFY !== '0';
    const tls =
      cfg.tls ??
      (verify || env.DOCKER_CERT_PATH ? { certPath: env.DOCKER_CERT_PATH || join(homedir(), '.docker') } : undefined);
    return parseHost(env.DOCKER_HOST, tls, 'DOCKER_HOST');
  }
  const context = currentContextEngine(env, home);
  if (context)
    return parseHost(
      context.host,
      cfg.tls ?? (context.certPath ? { certPath: context.certPath } : undefined),
      context.source,
    );
  const desktop = desktopSocket(env, home);
  if (desktop) return { kind: 'socket', socketPath: desktop, label: `unix://${desktop}` };
  return { kind: 'socket', socketPath: DEFAULT_SOCKET, label: `unix://${DEFAULT_SOCKET}` };
}

function parseHost(raw: string, tlsFiles: EngineTlsFiles | undefined, source: string): EngineEndpoint {
  if (raw.startsWith('unix://')) {
    const socketPath = raw.slice('unix://'.length) || DEFAULT_SOCKET;
    return { kind: 'socket', socketPath, label: `unix://${socketPath}` };
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`${source}: "${raw}" is not an engine address (unix:///var/run/docker.sock or tcp://host:2376)`);
  }
  if (url.protocol !== 'tcp:') throw new Error(`${source}: "${raw}": only unix:// and tcp:// engines are supported`);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const tls = tlsFiles ? readTls(tlsFiles, source) : null;
  if (!tls && !LOOPBACK.test(host)) {
    throw new Error(
      `${source}: the engine at ${raw} is not on this machine: give docker.tls (ca, cert and key, or certPath) ` +
        `so the connection is TLS with both sides verified`,
    );
  }
  const port = url.port ? Number(url.port) : tls ? 2376 : 2375;
  return { kind: 'tcp', host, port, tls, label: `tcp://${url.hostname}:${port}${tls ? ' (TLS)' : ''}` };
}

function readTls(files: EngineTlsFiles, source: string): { ca: Buffer; cert: Buffer; key: Buffer } {
  const pick = (name: 'ca' | 'cert' | 'key') =>
    files[name] ?? (files.certPath ? join(files.certPath, `${name}.pem`) : undefined);
  const read = (name: 'ca' | 'cert' | 'key') => {
    const file = pick(name);
    if (!file)
      throw new Error(
        `${source}: docker.tls.${name} is missing (or give docker.tls.certPath, a directory with ca.pem, cert.pem and key.pem)`,
      );
    try {
      return readFileSync(file);
    } catch (err) {
      throw new Error(
        `${source}: cannot read the TLS ${name} file ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
      );
    }
  };
  return { ca: read('ca'), cert: read('cert'), key: read('key') };
}

/** dockerode's constructor options for an endpoint. */
export function dockerodeOptions(e: EngineEndpoint): Record<string, unknown> {
  if (e.kind === 'socket') return { socketPath: e.socketPath };
  return e.tls
    ? { host: e.host, port: e.port, protocol: 'https', ca: e.tls.ca, cert: e.tls.cert, key: e.tls.key }
    : { host: e.host, port: e.port, protocol: 'http' };
}
