import { execFileSync } from 'node:child_process';
import semver from 'semver';
import { beforeAll, describe, expect, it } from 'vitest';
import { LABELS } from '../../src/runtime/runtime.ts';
import { routerGet } from '../support/apps.ts';
import { useBuildApps } from '../support/build-apps.ts';
import { docker, dockerPs } from '../support/docker-cli.ts';

// Runtime versions: Node.js is the official binary of the version engines.node asks for (issue 34:
// any published version, resolved and fetched through the npm registry), Python and Ruby the version
// of a Debian suite (issue 25). Observed in the app's running container (node --version, npm
// --version, python3 --version) and through the router; the expected Node.js versions are asked of
// the registry by the test itself. A bad request ends the deployment in build-error, nothing built.
const LONG = 900_000;

/** The Node.js versions of a range the npm registry lists for the engine's architecture (asked here, apart from the emulator). */
const published = (range: string): string[] => {
  const arch = docker('info', '--format', '{{.Architecture}}') === 'aarch64' ? 'arm64' : 'x64';
  const out = execFileSync('npm', ['view', `node-linux-${arch}@${range}`, 'version', '--json'], { encoding: 'utf8' });
  const listed = JSON.parse(out) as string | string[];
  return Array.isArray(listed) ? listed : [listed];
};
const RANGES = ['22.x', '23.x', '24.x', '26'];
/** The newest of each range when the test started: the registry publishes releases while it runs. */
const newestAtStart: Record<string, string> = {};
/** The version a deployment's output says it installs. */
const installedVersion = (output: string): string =>
  /(?:Downloading and installing|Using) node (\d+\.\d+\.\d+)/.exec(output)?.[1] ?? 'none in the output';
/** A published version of the range, and at least the newest it had when the test started. */
const expectNewest = (version: string, range: string) => {
  expect(published(range)).toContain(version);
  expect(semver.gte(version, newestAtStart[range]), `${version} ≥ ${newestAtStart[range]}`).toBe(true);
};
let node22 = '';

const NODE_SERVER = "require('http').createServer((q, s) => s.end(process.version)).listen(process.env.PORT);\n";
const PYTHON_SERVER = `import os, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
class H(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.end_headers(); self.wfile.write(sys.version.split()[0].encode())
HTTPServer(("0.0.0.0", int(os.environ["PORT"])), H).serve_forever()
`;

describe('runtime versions asked by the app (real Docker, Debian-built stacks)', () => {
  beforeAll(() => {
    for (const range of RANGES) newestAtStart[range] = semver.rsort(published(range))[0];
  });
  const b = useBuildApps(LONG);
  const { deploy, redeploy, webContainer } = b;

  it(
    'engines.node "22.x": the app runs the newest Node.js 22 of the npm registry, with npm 10',
    async () => {
      const pkg = { name: 'node22', engines: { node: '22.x' }, scripts: { start: 'node server.js' } };
      const { d, output } = await deploy('node22', { 'package.json': JSON.stringify(pkg), 'server.js': NODE_SERVER });
      expect(d.status, output).toBe('success');
      const version = (node22 = installedVersion(output));
      expectNewest(version, '22.x');
      expect(output).toContain('-----> Installing binaries');
      expect(output).toContain('       engines.node (package.json):   22.x');
      expect(output).toContain('       engines.npm (package.json):    unspecified (use default)');
      expect(output).toContain('       Resolving node version 22.x...');
      const web = await webContainer('node22');
      expect(docker('exec', web, 'node', '--version')).toBe(`v${version}`);
      expect(docker('exec', web, 'npm', '--version')).toMatch(/^10\./);
      expect(docker('exec', web, 'sh', '-c', 'command -v node; command -v corepack')).toBe(
        '/usr/local/bin/node\n/usr/local/bin/corepack',
      );
      expect(docker('exec', web, 'sh', '-c', 'node -p process.execPath; npm prefix -g')).toBe(
        '/usr/local/bin/node\n/usr/local',
      );
      // node-gyp's headers where it looks before downloading them (native modules compile offline).
      expect(
        docker(
          'exec',
          web,
          'sh',
          '-c',
          `grep -c 'define NODE_MAJOR_VERSION 22' $HOME/.cache/node-gyp/${version}/include/node/node_version.h`,
        ),
      ).toBe('1');
      // They compile as an addon's would, OpenSSL's included: its configuration headers select the engine's
      // platform (the image keeps that platform's only), and the official tarball's files are where it puts them.
      const addon =
        '#include <node_api.h>\\n#include <openssl/ssl.h>\\nint main(void) { return OPENSSL_VERSION_MAJOR; }\\n';
      expect(
        docker(
          'exec',
          web,
          'sh',
          '-c',
          `printf '${addon}' | gcc -fsyntax-only -x c -I $HOME/.cache/node-gyp/${version}/include/node - && echo compiled`,
        ),
      ).toBe('compiled');
      const layout = 'cd /usr/local && ls LICENSE share/man/man1/node.1 && (test -e package.json || echo no-manifest)';
      expect(docker('exec', web, 'sh', '-c', layout)).toBe('LICENSE\nshare/man/man1/node.1\nno-manifest');
      // Debian's Node.js is not in the stack any more: the binary is the runtime.
      expect(docker('exec', web, 'sh', '-c', 'test -e /usr/bin/node && echo debian || echo none')).toBe('none');
      expect((await routerGet(b.h.emu.urls.routerPort, 'node22')).body).toBe(`v${version}`);
    },
    LONG,
  );

  it(
    'a redeployment reuses the dependency layer; after DELETE …/caches/deployment it is built again',
    async () => {
      const again = await redeploy('node22');
      expect(again.d.status, again.output).toBe('success');
      expect(again.output).toContain(`Using node ${node22} (installed before)`);
      expect(again.output).toContain('Reusing the dependency layer from the build cache');
      expect(again.output).not.toContain('Installing dependencies');
      expect((await b.h.call('DELETE', '/v1/apps/node22/caches/deployment')).status).toBe(204);
      const fresh = await redeploy('node22');
      expect(fresh.d.status, fresh.output).toBe('success');
      expect(fresh.output).toContain('-----> Installing dependencies\n       Installing node modules (package.json)');
      expect(fresh.output).not.toContain('Reusing the dependency layer');
      expect(docker('exec', await webContainer('node22'), 'node', '--version')).toBe(`v${node22}`);
    },
    LONG,
  );

  it(
    'engines.node ">=24 <25", then an app with no engines: both run the newest Node.js 24 (the LTS default), one image',
    async () => {
      const pkg = { name: 'node24', engines: { node: '>=24 <25' }, scripts: { start: 'node server.js' } };
      const first = await deploy('node24', { 'package.json': JSON.stringify(pkg), 'server.js': NODE_SERVER });
      expect(first.d.status, first.output).toBe('success');
      const version = installedVersion(first.output);
      expectNewest(version, '24.x');
      expect(docker('exec', await webContainer('node24'), 'node', '--version')).toBe(`v${version}`);
      expect(docker('exec', await webContainer('node24'), 'npm', '--version')).toMatch(/^11\./);

      const plain = { name: 'node-default', scripts: { start: 'node server.js' } };
      const { d, output } = await deploy('node-default', {
        'package.json': JSON.stringify(plain),
        'server.js': NODE_SERVER,
      });
      expect(d.status, output).toBe('success');
      expect(output).toContain('       engines.node (package.json):   unspecified');
      expect(output).toContain(' !     Node version not specified in package.json');
      expect(output).toContain('       No Node.js version specified, resolving current LTS version...');
      // The second app on the same version reuses the image the first one built.
      expect(output).toContain(`       Using node ${version} (installed before)`);
      expect(docker('exec', await webContainer('node-default'), 'node', '--version')).toBe(`v${version}`);
      expect((await routerGet(b.h.emu.urls.routerPort, 'node-default')).body).toBe(`v${version}`);
      const nodeImages = docker(
        'images',
        '--format',
        '{{.Tag}}',
        '--filter',
        'label=io.scalingo-emulator.node-runtime',
      );
      expect(nodeImages.split('\n').filter((t) => t.startsWith(`${version}-npm`))).toHaveLength(1);
      // The containers the Node.js images were made in (named with the emulator's pid, this process) are gone.
      const left = docker('ps', '-a', '--filter', 'label=io.scalingo-emulator.node-runtime', '--format', '{{.Names}}');
      expect(left.split('\n').filter((n) => n.includes(`-${process.pid}-`))).toEqual([]);
    },
    LONG,
  );

  it(
    'engines.npm "11.x" beside engines.node "22.x": npm 11 instead of the npm 10 Node.js 22 ships',
    async () => {
      const pkg = {
        name: 'node22-npm11',
        engines: { node: '22.x', npm: '11.x' },
        scripts: { start: 'node server.js' },
      };
      const { d, output } = await deploy('node22-npm11', {
        'package.json': JSON.stringify(pkg),
        'server.js': NODE_SERVER,
      });
      expect(d.status, output).toBe('success');
      expect(output).toContain('       engines.npm (package.json):    11.x');
      expect(output).toMatch(/ {7}npm 11\.\d+\.\d+ installed \(engines\.npm 11\.x\)/);
      const web = await webContainer('node22-npm11');
      expect(docker('exec', web, 'node', '--version')).toBe(`v${installedVersion(output)}`);
      expectNewest(installedVersion(output), '22.x');
      expect(docker('exec', web, 'npm', '--version')).toMatch(/^11\./);
    },
    LONG,
  );

  it(
    'engines.node "26": the newest Node.js 26, with npm 11 and no corepack (Node.js 25+ ships none)',
    async () => {
      const pkg = { name: 'node26', engines: { node: '26' }, scripts: { start: 'node server.js' } };
      const { d, output } = await deploy('node26', { 'package.json': JSON.stringify(pkg), 'server.js': NODE_SERVER });
      expect(d.status, output).toBe('success');
      const web = await webContainer('node26');
      expect(docker('exec', web, 'node', '--version')).toBe(`v${installedVersion(output)}`);
      expectNewest(installedVersion(output), '26');
      expect(docker('exec', web, 'npm', '--version')).toMatch(/^11\./);
      expect(docker('exec', web, 'sh', '-c', 'command -v corepack || echo none')).toBe('none');
    },
    LONG,
  );

  it(
    'runtime.txt python-3.13: the app runs Python 3.13 from Debian trixie',
    async () => {
      const { d, output } = await deploy('python313', {
        'runtime.txt': 'python-3.13.0\n',
        'requirements.txt': '',
        'app.py': PYTHON_SERVER,
      });
      expect(d.status, output).toBe('success');
      expect(docker('exec', await webContainer('python313'), 'python3', '--version')).toBe('Python 3.13.5');
      expect((await routerGet(b.h.emu.urls.routerPort, 'python313')).body).toBe('3.13.5');
    },
    LONG,
  );

  it(
    'engines.node that is not a range, or that no Node.js satisfies: build-error saying so, nothing built or started',
    async () => {
      const bad = { name: 'node-lts', engines: { node: 'lts/*' }, scripts: { start: 'node server.js' } };
      const invalid = await deploy('node-lts', { 'package.json': JSON.stringify(bad), 'server.js': NODE_SERVER });
      expect(invalid.d.status).toBe('build-error');
      expect(invalid.output).toContain(
        'Build failed: Invalid semantic version "lts/*" in engines.node (package.json): write an npm semver range, e.g. "24.x"',
      );
      expect(invalid.output).not.toContain('Resolving node version');

      const missing = { name: 'node23', engines: { node: '23.99.x' }, scripts: { start: 'node server.js' } };
      const none = await deploy('node23', { 'package.json': JSON.stringify(missing), 'server.js': NODE_SERVER });
      expect(none.d.status).toBe('build-error');
      const said =
        /Build failed: Could not find Node version corresponding to version requirement: 23\.99\.x \(engines\.node in package\.json\)\. No published Node\.js satisfies it; the nearest are (\S+), (\S+) and (\S+)\./.exec(
          none.output,
        );
      expect(said, none.output).not.toBeNull();
      // The newest release of 22, 23 and 24, the majors closest to 23.
      for (const [i, range] of ['22.x', '23.x', '24.x'].entries()) expectNewest(said?.[i + 1] ?? '', range);
      for (const app of ['node-lts', 'node23']) {
        const appId = (await b.h.call('GET', `/v1/apps/${app}`)).body.app.id as string;
        expect(dockerPs([`${LABELS.appId}=${appId}`], true)).toEqual([]);
        expect(docker('images', '-q', '--filter', `label=${LABELS.appId}=${appId}`)).toBe('');
      }
    },
    LONG,
  );

  it(
    'a Ruby version no Debian suite has: build-error naming the versions that exist, nothing started',
    async () => {
      const ruby = await deploy('ruby27-app', { Gemfile: '', '.ruby-version': '2.7.8\n', 'app.rb': 'puts 1\n' });
      expect(ruby.d.status).toBe('build-error');
      expect(ruby.output).toContain('Ruby "2.7.8" (.ruby-version) is not available');
      const appId = (await b.h.call('GET', '/v1/apps/ruby27-app')).body.app.id as string;
      expect(dockerPs([`${LABELS.appId}=${appId}`], true)).toEqual([]);
    },
    LONG,
  );
});
