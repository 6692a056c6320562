import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_SOCKET } from '../../src/runtime/engine-endpoint.ts';
import { versionOverSocket } from '../../src/runtime/engine-probe.ts';

// The health probe's request on the engine's socket (src/runtime/engine-probe.ts): the real engine, and small
// servers on a Unix socket of the test's own for the answers an engine may give.
const dir = mkdtempSync(join(tmpdir(), 'emu-probe-'));
const servers: Server[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => new Promise((done) => s.close(done))));
  rmSync(dir, { recursive: true, force: true });
});

/** A server on a new socket in `dir` that answers every request with `handler`; resolves to the socket's path. */
async function engineLike(name: string, handler: Parameters<typeof createServer>[1]): Promise<string> {
  const path = join(dir, `${name}.sock`);
  const server = createServer(handler);
  server.on('error', () => undefined);
  servers.push(server);
  await new Promise<void>((ok) => server.listen(path, ok));
  return path;
}

describe('engine probe over the socket', () => {
  it("answers the engine's own version, as `docker version` reads it", async () => {
    const expected = execFileSync('docker', ['version', '--format', '{{.Server.Version}} {{.Server.APIVersion}}'], {
      encoding: 'utf8',
    }).trim();
    const v = await versionOverSocket(process.env.DOCKER_HOST?.replace(/^unix:\/\//, '') || DEFAULT_SOCKET, 2000);
    expect(`${v.Version} ${v.ApiVersion}`).toBe(expected);
  });

  it('asks GET /version for JSON, with the Host header of a local socket', async () => {
    let seen: { method?: string; url?: string; accept?: string; host?: string } = {};
    const path = await engineLike('ok', (req, res) => {
      seen = { method: req.method, url: req.url, accept: req.headers.accept, host: req.headers.host };
      res.setHeader('content-type', 'application/json');
      res.end('{"Version":"1.2.3","ApiVersion":"1.45"}');
    });
    await expect(versionOverSocket(path, 2000)).resolves.toEqual({ Version: '1.2.3', ApiVersion: '1.45' });
    expect(seen).toEqual({ method: 'GET', url: '/version', accept: 'application/json', host: 'localhost' });
  });

  it("rejects with the engine's message and status for an error answer", async () => {
    const path = await engineLike('error', (_req, res) => {
      res.statusCode = 500;
      res.end('{"message":"engine is shutting down"}');
    });
    await expect(versionOverSocket(path, 2000)).rejects.toMatchObject({
      message: 'engine is shutting down',
      statusCode: 500,
    });
  });

  it('rejects a socket that is not there with its own error, and an answer over 1 MiB', async () => {
    await expect(versionOverSocket(join(dir, 'none.sock'), 2000)).rejects.toMatchObject({ code: 'ENOENT' });
    const path = await engineLike('huge', (_req, res) => {
      res.write(Buffer.alloc(1 << 20, 0x20));
      res.end(Buffer.alloc(1024, 0x20));
    });
    await expect(versionOverSocket(path, 2000)).rejects.toThrow(/more than 1 MiB/);
  });

  it('gives up after its timeout when the engine accepts and never answers', async () => {
    const path = await engineLike('silent', () => undefined);
    await expect(versionOverSocket(path, 200)).rejects.toThrow(/did not answer within 200 ms/);
  });
});
