import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildExe } from '../../scripts/build-exe.ts';
import { hostArch } from '../../scripts/exe/node-binary.ts';
import { LABELS } from '../../src/runtime/runtime.ts';
import { FIXTURES, routerGet } from '../support/apps.ts';
import { spawnCaptured } from '../support/captured-process.ts';
import { docker, dockerPs, eventually, giveUp, instanceOfApp, removeInstance } from '../support/docker-cli.ts';
import { expectStartDeployServe } from '../support/executable-checks.ts';
import { FREE_PORT_FLAGS } from '../support/free-port.ts';

// The single executable (`npm run build:exe`) as a machine without Node.js runs it: copied to a scratch folder and run
// with a PATH holding every command of this machine but node, npm, npx and corepack. Its apps are Procfile apps on the
// busybox stack: a Node.js app's build needs the host's npm (README, "One executable file").
const LONG = 600_000;
const scratch = mkdtempSync(join(tmpdir(), 'emu-exe-'));
const exe = join(scratch, 'scalingo-emulator');
const NO_NODE = /^(node|nodejs|npm|npx|corepack)$/;
let env: NodeJS.ProcessEnv = {};

function run(args: string[], cwd = scratch) {
  return spawnCaptured(exe, args, { cwd, env });
}

beforeAll(async () => {
  // Built once per content (kept in dist/ while its inputs are the same).
  copyFileSync(await buildExe(hostArch() === 'arm64' ? 'arm64' : 'x64'), exe);
  chmodSync(exe, 0o755);
  const bin = join(scratch, 'bin');
  mkdirSync(bin);
  for (const dir of ['/usr/local/bin', '/usr/bin', '/bin', '/usr/sbin', '/sbin'])
    for (const name of existsSync(dir) ? readdirSync(dir) : [])
      if (!NO_NODE.test(name) && !existsSync(join(bin, name))) symlinkSync(join(dir, name), join(bin, name));
  env = {
    PATH: bin,
    HOME: scratch,
    XDG_CACHE_HOME: join(scratch, 'cache'),
    XDG_STATE_HOME: join(scratch, 'state'),
    NO_COLOR: '1',
    ...(process.env.DOCKER_HOST ? { DOCKER_HOST: process.env.DOCKER_HOST } : {}),
  };
  const which = spawnSync('sh', ['-c', 'command -v node || command -v npm || command -v npx'], {
    env,
    encoding: 'utf8',
  });
  expect(which.stdout, 'the PATH of the test still holds node or npm').toBe('');
}, LONG);

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('the single executable, on a PATH without node or npm', () => {
  it(
    'start: the API answers and an app deploys, served through the router',
    () => expectStartDeployServe({ argv: [exe], env, cwd: scratch }, join(scratch, 'data-start'), 'exe-web', 180_000),
    LONG,
  );

  it(
    'exec -- <command>: the command sees the emulator, and its exit code is the executable’s',
    async () => {
      const ok = run(['exec', '--', 'sh -c \'busybox wget -q -O - "$EMULATOR_API_URL/_emulator/health"\'']);
      expect(await ok.exited, ok.stderr()).toBe(0);
      expect(ok.stdout()).toMatch(/"status"/);
      const failing = run(['exec', '--', 'sh', '-c', 'exit 7']);
      expect(await failing.exited, failing.stderr()).toBe(7);
    },
    LONG,
  );

  it(
    'up on a fixture project: deployed and served; Ctrl-C stops it and removes its containers',
    async () => {
      const project = join(scratch, 'exe-up');
      mkdirSync(project);
      for (const f of ['Procfile', 'index.html']) copyFileSync(join(FIXTURES, 'busybox-web', f), join(project, f));
      let instance = '';
      const p = run(['up', project, '--no-watch', '--in-memory', ...FREE_PORT_FLAGS]);
      try {
        const url = await eventually(
          () => {
            if (p.child.exitCode !== null) throw giveUp(`up exited ${p.child.exitCode}: ${p.stderr()}`);
            if (!/Ctrl-C stops the app/.test(p.stdout())) return null;
            return /http:\/\/exe-up\.localhost:(\d+)/.exec(p.stdout());
          },
          { timeoutMs: 240_000, what: 'up to serve the app' },
        );
        const running = dockerPs([`${LABELS.appName}=exe-up`, `${LABELS.type}=web`]);
        expect(running.map((c) => c.state)).toEqual(['running']);
        instance = instanceOfApp('exe-up');
        expect((await routerGet(Number(url[1]), 'exe-up')).body).toBe('version 1 from web-1\n');
        p.child.kill('SIGINT');
        expect(await p.exited, p.stderr()).toBe(0);
        expect(dockerPs([`${LABELS.appName}=exe-up`], true)).toEqual([]);
      } finally {
        if (p.child.exitCode === null) p.child.kill('SIGKILL');
        for (const c of dockerPs([`${LABELS.appName}=exe-up`], true)) docker('rm', '-f', c.id);
        // Its app image too: `up` stopping removes the containers, not the image of the deployment.
        if (instance) removeInstance(instance);
      }
    },
    LONG,
  );

  it('a cache directory others can write: one line, exit 1', async () => {
    const open = join(scratch, 'open-cache');
    mkdirSync(open);
    chmodSync(open, 0o777);
    const p = spawnSync(exe, ['start', '--in-memory', ...FREE_PORT_FLAGS], {
      env: { ...env, EMULATOR_EXE_CACHE_DIR: open },
      encoding: 'utf8',
    });
    expect(p.status).toBe(1);
    expect(p.stderr.trim().split('\n')).toEqual([
      `scalingo-emulator: cannot use its cache directory: ${open} is writable by others (mode 777) (set EMULATOR_EXE_CACHE_DIR to a directory only you can write)`,
    ]);
    expect(readdirSync(open)).toEqual([]);
  });
});
