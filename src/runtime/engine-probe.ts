import { type RequestOptions, request } from 'node:http';

export interface EngineVersion {
  Version: string;
  ApiVersion: string;
  Arch?: string;
}

/**
 * GET /version on the engine's Unix socket with node:http alone: the request dockerode makes for
 * `docker.version()`, without loading dockerode (and the modules under it), so the health probe
 * answers as soon as the API listens. Socket endpoints only (engine-endpoint.ts resolves which);
 * a TCP engine, with or without TLS, is probed through dockerode.
 *
 * Rejects like dockerode does: the socket's own error (ENOENT, ECONNREFUSED…), or `{statusCode, json}` for an error answer.
 */
/**
 * No TLS here: without a `servername`, node's agent guesses one from the host at every request (`isIP('localhost')`,
 * whose IPv6 regular expression is compiled at the first call), ~2 ms of a start's CPU (BENCHMARKS.md, issue 25).
 */
const NO_SERVER_NAME: RequestOptions & { servername: string } = { servername: '' };

export function versionOverSocket(socketPath: string, timeoutMs: number): Promise<EngineVersion> {
  return new Promise((resolve, reject) => {
    const req = request(
      { socketPath, path: '/version', method: 'GET', headers: { accept: 'application/json' }, ...NO_SERVER_NAME },
      (res) => {
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
          const message =
            (json as { message?: string } | null)?.message ?? `(HTTP code ${status}) ${text.slice(0, 200)}`;
          reject(Object.assign(new Error(message), { statusCode: status, json }));
        });
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`the Docker engine did not answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}
