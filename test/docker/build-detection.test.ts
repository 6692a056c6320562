import { describe, expect, it } from 'vitest';
import { DEFAULT_STACK_IMAGE } from '../../src/config/schema.ts';
import { routerGet } from '../support/apps.ts';
import { useBuildApps } from '../support/build-apps.ts';
import { docker } from '../support/docker-cli.ts';

// Detection as on the platform (issue 34, point 4): code a buildpack detects is built by that buildpack
// whatever else it holds, a Dockerfile included (the platform's Node buildpack ignores it); a Dockerfile is
// built only where no buildpack applies. Observed through the router and in the running container.
const LONG = 600_000;

const NODE_SERVER =
  "require('http').createServer((q, s) => s.end('node ' + process.version)).listen(process.env.PORT);\n";
// What the Dockerfile's image would answer, had it been built: another server, on the busybox stack.
const DOCKERFILE = `FROM ${DEFAULT_STACK_IMAGE}\nRUN mkdir -p /www && echo from the Dockerfile > /www/index.html\nCMD httpd -f -p $PORT -h /www\n`;

describe('buildpack or Dockerfile: the choice the platform makes (real Docker)', () => {
  const b = useBuildApps(LONG);
  const { deploy, webContainer } = b;

  it(
    'a package.json next to a Dockerfile: the Node.js buildpack builds it, and the output says the Dockerfile is not used',
    async () => {
      const pkg = { name: 'with-dockerfile', scripts: { start: 'node server.js' } };
      const { d, output } = await deploy('node-and-dockerfile', {
        'package.json': JSON.stringify(pkg),
        'server.js': NODE_SERVER,
        Dockerfile: DOCKERFILE,
      });
      expect(d.status, output).toBe('success');
      expect(output).toContain(
        '-----> Dockerfile not used: package.json makes this a node app, built by its buildpack as on the platform',
      );
      expect(output).toContain('-----> Node.js app detected');
      const version = docker('exec', await webContainer('node-and-dockerfile'), 'node', '--version');
      expect(version).toMatch(/^v\d+\./);
      expect((await routerGet(b.h.emu.urls.routerPort, 'node-and-dockerfile')).body).toBe(`node ${version}`);
    },
    LONG,
  );

  it(
    'a Dockerfile where no buildpack applies is built, and the output says it is a convenience of the emulator',
    async () => {
      const { d, output } = await deploy('only-dockerfile', { Dockerfile: DOCKERFILE });
      expect(d.status, output).toBe('success');
      expect(output).toContain(
        '-----> Dockerfile detected: building it (no buildpack applies; an emulator convenience, the platform builds with buildpacks only)',
      );
      expect((await routerGet(b.h.emu.urls.routerPort, 'only-dockerfile')).body).toBe('from the Dockerfile\n');
    },
    LONG,
  );
});
