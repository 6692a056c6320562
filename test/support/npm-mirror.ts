import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// A registry mirror on 127.0.0.1, as a user behind a company mirror has: it serves the tarballs of the
// packages it was given (fetched first by the host's npm, `npm pack`) and their packuments, the
// version lists of `listed` packages, and 404 for everything else; it counts what it was asked.
export interface NpmMirror {
  url: string;
  requests: string[];
  close(): Promise<void>;
}

interface Packed {
  name: string;
  version: string;
  filename: string;
  integrity: string;
  shasum: string;
}

export async function startNpmMirror(specs: string[], listed: string[] = []): Promise<NpmMirror> {
  const dir = mkdtempSync(join(tmpdir(), 'emu-npm-mirror-'));
  const packed = JSON.parse(
    execFileSync('npm', ['pack', ...specs, '--pack-destination', dir, '--json'], { cwd: dir, encoding: 'utf8' }),
  ) as Packed[];
  const lists = new Map(
    listed.map((name) => [
      name,
      JSON.parse(execFileSync('npm', ['view', name, 'versions', '--json'], { cwd: dir, encoding: 'utf8' })) as string[],
    ]),
  );
  const requests: string[] = [];
  let base = '';
  const tarballPath = (p: Packed) => `/${p.name}/-/${p.name.split('/').pop()}-${p.version}.tgz`;
  const packument = (name: string) => {
    const own = packed.filter((p) => p.name === name);
    const versions: Record<string, unknown> = {};
    for (const v of lists.get(name) ?? []) versions[v] = { name, version: v };
    for (const p of own)
      versions[p.version] = {
        name,
        version: p.version,
        dist: { tarball: `${base}${tarballPath(p).slice(1)}`, integrity: p.integrity, shasum: p.shasum },
      };
    const all = Object.keys(versions);
    return all.length ? { name, 'dist-tags': { latest: all[all.length - 1] }, versions } : null;
  };
  const server: Server = createServer((req, res) => {
    const path = decodeURIComponent((req.url ?? '/').split('?')[0]);
    requests.push(path);
    const tarball = packed.find((p) => tarballPath(p) === path);
    if (tarball) {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      return void res.end(readFileSync(join(dir, tarball.filename)));
    }
    const doc = packument(path.slice(1));
    res.writeHead(doc ? 200 : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify(doc ?? { error: 'Not found' }));
  });
  server.on('clientError', (_err, socket) => socket.destroy());
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => ok());
  });
  server.on('error', () => undefined);
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return {
    url: base,
    requests,
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
        rmSync(dir, { recursive: true, force: true });
      }),
  };
}
