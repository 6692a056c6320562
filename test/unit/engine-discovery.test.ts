import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_SOCKET, resolveEngineEndpoint } from '../../src/runtime/engine-endpoint.ts';

// Issue 36: the engine found where the docker CLI finds it when nothing names it — DOCKER_HOST, the current
// context (DOCKER_CONTEXT or ~/.docker/config.json), Docker Desktop's ~/.docker/run/docker.sock, then the
// system socket. Each case is a home directory made here, laid out as the docker CLI lays it out.
const roots: string[] = [];
const servers: Server[] = [];
afterAll(async () => {
  for (const s of servers) await new Promise((ok) => s.close(ok));
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

function home(): string {
  const dir = mkdtempSync(join(tmpdir(), 'emu-home-'));
  roots.push(dir);
  mkdirSync(join(dir, '.docker'), { recursive: true });
  return dir;
}

/** A context as `docker context create NAME --docker host=HOST` stores it (meta dir: the sha256 of the name). */
function addContext(h: string, name: string, host: string, tls = false): string {
  const id = createHash('sha256').update(name).digest('hex');
  const meta = join(h, '.docker', 'contexts', 'meta', id);
  mkdirSync(meta, { recursive: true });
  writeFileSync(
    join(meta, 'meta.json'),
    JSON.stringify({ Name: name, Metadata: {}, Endpoints: { docker: { Host: host, SkipTLSVerify: false } } }),
  );
  if (tls) {
    const dir = join(h, '.docker', 'contexts', 'tls', id, 'docker');
    mkdirSync(dir, { recursive: true });
    for (const f of ['ca.pem', 'cert.pem', 'key.pem']) writeFileSync(join(dir, f), `${f} of ${name}`);
  }
  return id;
}

const useContext = (h: string, name: string) =>
  writeFileSync(join(h, '.docker', 'config.json'), JSON.stringify({ auths: {}, currentContext: name }));

/** A listening unix socket at Docker Desktop's place. */
async function desktopSocket(h: string): Promise<string> {
  mkdirSync(join(h, '.docker', 'run'), { recursive: true });
  const path = join(h, '.docker', 'run', 'docker.sock');
  const server = createServer().on('error', () => undefined);
  servers.push(server);
  await new Promise<void>((ok) => server.listen(path, ok));
  return path;
}

describe('engine discovery', () => {
  it('nothing set up: the system socket', () => {
    expect(resolveEngineEndpoint({}, {}, home())).toMatchObject({ kind: 'socket', socketPath: DEFAULT_SOCKET });
  });

  it("Docker Desktop's socket in the home directory comes before the system socket", async () => {
    const h = home();
    const socket = await desktopSocket(h);
    expect(resolveEngineEndpoint({}, {}, h)).toEqual({ kind: 'socket', socketPath: socket, label: `unix://${socket}` });
  });

  it('the current context of config.json comes before the sockets; DOCKER_CONTEXT before config.json', async () => {
    const h = home();
    await desktopSocket(h);
    addContext(h, 'desktop-linux', `unix://${join(h, 'desktop.sock')}`);
    addContext(h, 'colima', 'unix:///home/me/.colima/default/docker.sock');
    useContext(h, 'desktop-linux');
    expect(resolveEngineEndpoint({}, {}, h)).toMatchObject({ kind: 'socket', socketPath: join(h, 'desktop.sock') });
    expect(resolveEngineEndpoint({}, { DOCKER_CONTEXT: 'colima' }, h)).toMatchObject({
      socketPath: '/home/me/.colima/default/docker.sock',
    });
  });

  it('DOCKER_HOST and the configuration come before the context', () => {
    const h = home();
    addContext(h, 'desktop-linux', 'unix:///ctx.sock');
    useContext(h, 'desktop-linux');
    expect(resolveEngineEndpoint({}, { DOCKER_HOST: 'unix:///env.sock' }, h)).toMatchObject({
      socketPath: '/env.sock',
    });
    expect(resolveEngineEndpoint({ socketPath: '/cfg.sock' }, {}, h)).toMatchObject({ socketPath: '/cfg.sock' });
  });

  it('the "default" context, an unknown one, or an unreadable config.json: on to the sockets', () => {
    const h = home();
    useContext(h, 'default');
    expect(resolveEngineEndpoint({}, {}, h)).toMatchObject({ socketPath: DEFAULT_SOCKET });
    useContext(h, 'gone');
    expect(resolveEngineEndpoint({}, {}, h)).toMatchObject({ socketPath: DEFAULT_SOCKET });
    writeFileSync(join(h, '.docker', 'config.json'), '{ not json');
    expect(resolveEngineEndpoint({}, {}, h)).toMatchObject({ socketPath: DEFAULT_SOCKET });
  });

  it("a tcp context is spoken to over TLS with the context's files; without them, a remote one is refused", () => {
    const h = home();
    addContext(h, 'remote', 'tcp://engine.example:2376', true);
    useContext(h, 'remote');
    const e = resolveEngineEndpoint({}, {}, h);
    expect(e).toMatchObject({
      kind: 'tcp',
      host: 'engine.example',
      port: 2376,
      label: 'tcp://engine.example:2376 (TLS)',
    });
    expect(e.kind === 'tcp' && e.tls?.ca.toString()).toBe('ca.pem of remote');
    addContext(h, 'plain', 'tcp://engine.example:2375');
    expect(() => resolveEngineEndpoint({}, { DOCKER_CONTEXT: 'plain' }, h)).toThrow(
      /docker context "plain": the engine at tcp:\/\/engine\.example:2375 is not on this machine/,
    );
  });

  it('DOCKER_CONFIG moves the docker directory', () => {
    const h = home();
    const other = mkdtempSync(join(tmpdir(), 'emu-docker-config-'));
    roots.push(other);
    addContext(h, 'elsewhere', 'unix:///not-this.sock');
    mkdirSync(join(other, 'contexts'), { recursive: true });
    writeFileSync(join(other, 'config.json'), JSON.stringify({ currentContext: 'elsewhere' }));
    // The context is looked up under DOCKER_CONFIG, where it does not exist: the system socket.
    expect(resolveEngineEndpoint({}, { DOCKER_CONFIG: other }, h)).toMatchObject({ socketPath: DEFAULT_SOCKET });
  });
});
