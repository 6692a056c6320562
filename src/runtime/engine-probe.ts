import { request } from 'node:http';

/**
 * GET /version on the engine's Unix socket with node:http alone: the request dockerode makes for
 * `docker.version()`, without loading dockerode (and the modules under it), so the health probe
 * answers as soon as the API listens. Only for a local socket — the default, `socketPath`, or
 * DOCKER_HOST=unix://…; any other endpoint (tcp, ssh, TLS settings) returns null and is probed
 * through dockerode, which knows those.
 */
export function localEngineSocket(socketPath: string | undefined, env: NodeJS.ProcessEnv = process.env): string | null {
  if (socketPath) return socketPath;
  const host = env.DOCKER_HOST;
  if (!host) return process.platform === 'win32' ? null : '/var/run/docker.sock';
  return host.startsWith('unix://') ? host.slice('unix://'.length) : null;
}

export interface EngineVersion {
  Version: string;
  ApiVersion: string;
}

/** Rejects like dockerode does: the socket's own error (ENOENT, ECONNREFUSED…), or `{statusCode, json}` for an error answer. */
export function versionOverSocket(socketPath: string, timeoutMs: number): Promise<EngineVersion> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, path: '/version', method: 'GET', headers: { accept: 'application/json' } }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > 1 << 20) req.destroy(new Error('the Docker engine answered /version with more than 1 MiB'));
        else chunks.push(c);
      });
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = null;
        }
        const status = res.statusCode ?? 0;
        if (status >= 200 && status < 300 && json && typeof json === 'object') return resolve(json as EngineVersion);
        const message = (json as { message?: string } | null)?.message ?? `(HTTP code ${status}) ${text.slice(0, 200)}`;
        reject(Object.assign(new Error(message), { statusCode: status, json }));
      });
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`the Docker engine did not answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}
