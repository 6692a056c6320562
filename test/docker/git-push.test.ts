import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { c as tarCreate } from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LABELS } from '../../src/runtime/runtime.ts';
import { type Harness, startEmulator } from '../harness.ts';
import { copyFixture, FAST, routerGet } from '../support/apps.ts';
import { dockerPs, eventually, removeInstance } from '../support/docker-cli.ts';
import { commitAll, git, gitStart, head, initRepo, ssh } from '../support/git-cli.ts';
import { keyPair } from '../support/ssh-keys.ts';

// Deploy by `git push` with the stock git and ssh clients against the emulator's SSH endpoint,
// observed through the router, Docker and git itself.
const APP = 'pushed-app';

describe('git push (real git, ssh and Docker)', () => {
  let h: Harness;
  let sshPort: number;
  let work: string;
  let remote: string;
  const dev = keyPair('ed25519', 'dev@laptop');
  const other = keyPair('rsa', 'other@laptop');
  const stranger = keyPair('ed25519', 'stranger');
  const dirs: string[] = [];
  const page = async (app = APP) => (await routerGet(h.emu.urls.routerPort, app)).body;
  const deployments = async (app = APP) =>
    (await h.call('GET', `/v1/apps/${app}/deployments`)).body.deployments as {
      id: string;
      status: string;
      git_ref: string;
      pusher: { username: string } | null;
      type: string;
    }[];
  const setIndex = (text: string) => writeFileSync(join(work, 'index.html'), `${text} from CONTAINER_NAME\n`);

  beforeAll(async () => {
    h = await startEmulator({ intervals: FAST });
    sshPort = Number(new URL(h.emu.urls.git!.replace(/^ssh:/, 'http:')).port);
    expect(
      (await h.call('POST', '/v1/keys', { body: { key: { name: 'laptop', content: dev.publicKey } } })).status,
    ).toBe(201);
    expect(
      (await h.call('POST', '/v1/keys', { as: 'other', body: { key: { name: 'laptop', content: other.publicKey } } }))
        .status,
    ).toBe(201);
    const created = await h.call('POST', '/v1/apps', { body: { app: { name: APP } } });
    remote = created.body.app.git_url;
    work = copyFixture('busybox-web');
    dirs.push(work);
  });
  afterAll(async () => {
    await h.stop();
    removeInstance(h.emu.instanceId);
    for (const d of [...dirs, dev.dir, other.dir, stranger.dir]) rmSync(d, { recursive: true, force: true });
  });

  it('git_url is the SSH endpoint; a first push deploys: remote build lines, the router serves the page, recorded everywhere', async () => {
    expect(remote).toBe(`ssh://git@127.0.0.1:${sshPort}/${APP}.git`);
    const sha = await initRepo(work, dev.privateKey);
    expect((await git(work, dev.privateKey, 'remote', 'add', 'scalingo', remote)).code).toBe(0);
    const push = await git(work, dev.privateKey, 'push', 'scalingo', 'main');
    expect(push.code, push.out).toBe(0);
    expect(push.out).toContain(`remote: <-- Start deployment of ${APP} -->`);
    expect(push.out).toMatch(/remote: -----> Building on stack scalingo-22/);
    expect(push.out).toContain('remote: -----> Application deployed');
    expect(push.out).toMatch(/\* \[new branch\]\s+main -> main/);
    expect(await page()).toBe('version 1 from web-1\n');
    expect(
      dockerPs([`${LABELS.instance}=${h.emu.instanceId}`, `${LABELS.appName}=${APP}`, `${LABELS.type}=web`]),
    ).toHaveLength(1);

    const [d] = await deployments();
    expect(d).toMatchObject({ status: 'success', git_ref: sha, pusher: { username: 'dev' }, type: 'deployment' });
    expect((await h.call('GET', `/v1/apps/${APP}/deployments/${d.id}/output`)).text).toContain(
      `Code pushed at commit ${sha}`,
    );
    const events = (await h.call('GET', `/v1/apps/${APP}/events`)).body.events;
    expect(events.find((e: { type: string }) => e.type === 'deployment')).toMatchObject({
      user: { username: 'dev' },
      type_data: { git_ref: sha, pusher: 'dev', status: 'success' },
    });
    const logsUrl = (await h.call('GET', `/v1/apps/${APP}/logs`)).body.logs_url;
    await eventually(
      async () => (await (await fetch(`${logsUrl}&n=500`)).text()).includes('[deployment] -----> Application deployed'),
      { what: 'the build output in the app logs' },
    );
    // git itself sees the pushed branch (git-upload-pack).
    expect((await git(work, dev.privateKey, 'ls-remote', 'scalingo')).out).toContain(`${sha}\trefs/heads/main`);
  });

  it('a second push redeploys the new code; its output reaches the terminal and the deployments stream while it builds', async () => {
    setIndex('version 2');
    // A slower boot keeps the deployment running well after its build lines went out.
    writeFileSync(
      join(work, 'Procfile'),
      readFileSync(join(work, 'Procfile'), 'utf8').replace('web: ', 'web: sleep 2 && '),
    );
    const sha = await commitAll(work, dev.privateKey, 'v2');
    const { WebSocket } = await import('ws');
    const app = (await h.call('GET', `/v1/apps/${APP}`)).body.app;
    const ws = new WebSocket(app.links.deployments_stream);
    ws.on('error', () => undefined);
    const messages: { type: string; data: Record<string, unknown> }[] = [];
    ws.on('message', (m) => messages.push(JSON.parse(String(m))));
    await new Promise((ok) => ws.once('open', ok));
    ws.send(JSON.stringify({ type: 'auth', data: { token: await h.bearer() } }));
    await eventually(() => messages.some((m) => m.type === 'status'), { what: 'the stream replay' });

    const push = gitStart(work, dev.privateKey, 'push', 'scalingo', 'main');
    await eventually(() => push.output().includes('remote: -----> Process types'), {
      timeoutMs: 60_000,
      what: 'build lines on the terminal',
    });
    const during = (await deployments())[0];
    expect(during.git_ref).toBe(sha);
    expect(['building', 'pushing', 'starting']).toContain(during.status);
    const result = await push.done;
    expect(result.code, result.out).toBe(0);
    expect(await page()).toBe('version 2 from web-1\n');
    expect(
      messages.some((m) => m.type === 'log' && String(m.data.content).includes(`Code pushed at commit ${sha}`)),
    ).toBe(true);
    ws.close();
  });

  it('a failing build makes git push fail with the build error; the ref and the running version stay', async () => {
    const deployed = await head(work, dev.privateKey);
    rmSync(join(work, 'Procfile'));
    const sha = await commitAll(work, dev.privateKey, 'no Procfile');
    const push = await git(work, dev.privateKey, 'push', 'scalingo', 'main');
    expect(push.code).not.toBe(0);
    expect(push.out).toContain('remote: !      Build failed: no Procfile found');
    expect(push.out).toContain('Error deploying the application');
    expect(push.out).toMatch(/! \[remote rejected\]\s+main -> main \(pre-receive hook declined\)/);
    expect((await deployments())[0]).toMatchObject({ status: 'build-error', git_ref: sha });
    expect((await git(work, dev.privateKey, 'ls-remote', 'scalingo', 'main')).out).toContain(deployed);
    expect(await page()).toBe('version 2 from web-1\n');
    expect((await git(work, dev.privateKey, 'reset', '-q', '--hard', deployed)).code).toBe(0);
  });

  it('a rewritten history needs --force, then deploys; pushing again is "Everything up-to-date" and deploys nothing', async () => {
    setIndex('version 3');
    const sha = await commitAll(work, dev.privateKey, 'v3 instead of v2', '--amend');
    const refused = await git(work, dev.privateKey, 'push', 'scalingo', 'main');
    expect(refused.code).not.toBe(0);
    expect(refused.out).toMatch(/\[rejected\].*\(fetch first\)|non-fast-forward/);
    const forced = await git(work, dev.privateKey, 'push', '--force', 'scalingo', 'main');
    expect(forced.code, forced.out).toBe(0);
    expect(forced.out).toMatch(/\+ \w+\.\.\.\w+ main -> main \(forced update\)/);
    expect(await page()).toBe('version 3 from web-1\n');
    expect((await deployments())[0]).toMatchObject({ status: 'success', git_ref: sha });
    const count = (await deployments()).length;
    const empty = await git(work, dev.privateKey, 'push', 'scalingo', 'main');
    expect(empty.code).toBe(0);
    expect(empty.out).toContain('Everything up-to-date');
    expect(await deployments()).toHaveLength(count);
  });

  it('another branch pushed to main deploys; other branches and tags are refused without a deployment', async () => {
    expect((await git(work, dev.privateKey, 'checkout', '-q', '-b', 'topic')).code).toBe(0);
    setIndex('version 4');
    const sha = await commitAll(work, dev.privateKey, 'v4 on topic');
    const push = await git(work, dev.privateKey, 'push', 'scalingo', 'topic:main');
    expect(push.code, push.out).toBe(0);
    expect(await page()).toBe('version 4 from web-1\n');
    expect((await deployments())[0].git_ref).toBe(sha);
    const count = (await deployments()).length;
    const branch = await git(work, dev.privateKey, 'push', 'scalingo', 'topic');
    expect(branch.code).not.toBe(0);
    expect(branch.out).toContain('Only the master and main branches are deployed; refused: topic');
    expect((await git(work, dev.privateKey, 'tag', 'v4')).code).toBe(0);
    const tag = await git(work, dev.privateKey, 'push', 'scalingo', 'v4');
    expect(tag.code).not.toBe(0);
    expect(tag.out).toContain('refused: refs/tags/v4');
    expect(await deployments()).toHaveLength(count);
    expect((await git(work, dev.privateKey, 'ls-remote', 'scalingo')).out).not.toMatch(/refs\/(heads\/topic|tags)/);
  });

  it("refuses an unregistered key, another user's app, commands other than git's, a shell and port forwarding", async () => {
    const unknown = await git(work, stranger.privateKey, 'push', 'scalingo', 'topic:main');
    expect(unknown.code).not.toBe(0);
    expect(unknown.out).toContain('Permission denied (publickey)');
    const foreign = await git(work, other.privateKey, 'push', 'scalingo', 'topic:main');
    expect(foreign.code).not.toBe(0);
    expect(foreign.out).toContain(
      `App '${APP}' not found, or you may not deploy it (authenticated as other with key "laptop")`,
    );
    const command = await ssh(sshPort, dev.privateKey, ['ls', '/']);
    expect(command.code).toBe(1);
    expect(command.out).toContain('only git push and git fetch are served here');
    const shell = await ssh(sshPort, dev.privateKey, ['-T']);
    expect(shell.code).toBe(1);
    expect(shell.out).toContain(
      'Hi dev! You are authenticated (key "laptop"), but the Scalingo emulator gives no shell access',
    );
    const forward = await ssh(sshPort, dev.privateKey, [
      '-o',
      'ExitOnForwardFailure=yes',
      '-R',
      '127.0.0.1:0:127.0.0.1:9',
      `git-upload-pack '${APP}.git'`,
    ]);
    expect(forward.code).toBe(255);
    expect(forward.out).toMatch(/remote port forwarding failed/);
    const wrongUser = await ssh(sshPort, dev.privateKey, [`git-upload-pack '${APP}.git'`], 'dev');
    expect(wrongUser.code).toBe(255);
    // A collaborator may: the same key fetches once the owner invited its user.
    expect(
      (
        await h.call('POST', `/v1/apps/${APP}/collaborators`, {
          body: { collaborator: { email: 'other@example.test' } },
        })
      ).status,
    ).toBe(201);
    const fetched = await git(work, other.privateKey, 'ls-remote', 'scalingo', 'main');
    expect(fetched.code, fetched.out).toBe(0);
    expect(fetched.out).toContain(await head(work, dev.privateKey));
  });

  it('a push while a deployment runs waits for it, then deploys', async () => {
    const slow = copyFixture('busybox-web');
    dirs.push(slow);
    writeFileSync(
      join(slow, 'Procfile'),
      readFileSync(join(slow, 'Procfile'), 'utf8').replace('web: ', 'web: sleep 3 && '),
    );
    const archive = join(mkdtempSync(join(tmpdir(), 'emu-archive-')), 'slow.tar.gz');
    dirs.push(join(archive, '..'));
    await tarCreate({ gzip: true, file: archive, cwd: slow }, ['.']);
    expect(
      (await h.call('POST', `/v1/apps/${APP}/deployments`, { body: { deployment: { source_url: archive } } })).status,
    ).toBe(201);
    setIndex('version 5');
    const sha = await commitAll(work, dev.privateKey, 'v5');
    const push = await git(work, dev.privateKey, 'push', 'scalingo', 'topic:main');
    expect(push.code, push.out).toBe(0);
    expect(push.out).toContain(
      'remote: -----> Another deployment of this app is running: this one starts when it ends',
    );
    const [last, previous] = await deployments();
    expect(last).toMatchObject({ status: 'success', git_ref: sha });
    expect(previous).toMatchObject({ status: 'success', type: 'archive' });
    expect(await page()).toBe('version 5 from web-1\n');
  });

  it('a Dockerfile app deploys by push too', async () => {
    const app = (await h.call('POST', '/v1/apps', { body: { app: { name: 'pushed-docker-app' } } })).body.app;
    const dir = copyFixture('dockerfile-web');
    dirs.push(dir);
    await initRepo(dir, dev.privateKey);
    const push = await git(dir, dev.privateKey, 'push', app.git_url, 'main:master');
    expect(push.code, push.out).toBe(0);
    expect(push.out).toContain('remote: -----> Dockerfile detected: building it');
    expect(await page('pushed-docker-app')).toBe('built from a Dockerfile\n');
  });

  it("a rename keeps the repository under the new git_url; the old remote and, after deletion, the app's are refused", async () => {
    const renamed = await h.call('POST', `/v1/apps/${APP}/rename`, {
      body: { current_name: APP, new_name: 'renamed-push-app' },
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body.app.git_url).toBe(`ssh://git@127.0.0.1:${sshPort}/renamed-push-app.git`);
    const old = await git(work, dev.privateKey, 'push', 'scalingo', 'topic:main');
    expect(old.code).not.toBe(0);
    expect(old.out).toContain(`App '${APP}' not found`);
    expect((await git(work, dev.privateKey, 'remote', 'set-url', 'scalingo', renamed.body.app.git_url)).code).toBe(0);
    const same = await git(work, dev.privateKey, 'push', 'scalingo', 'topic:main');
    expect(same.code, same.out).toBe(0);
    expect(same.out).toContain('Everything up-to-date');

    const id = renamed.body.app.id;
    const repo = join(h.emu.stateDir, 'git', `${id}.git`);
    expect(existsSync(join(repo, 'HEAD'))).toBe(true);
    expect((await h.call('DELETE', '/v1/apps/renamed-push-app?current_name=renamed-push-app')).status).toBe(204);
    await eventually(() => !existsSync(repo), { what: 'the repository removed with the app' });
    setIndex('version 6');
    await commitAll(work, dev.privateKey, 'v6');
    const gone = await git(work, dev.privateKey, 'push', 'scalingo', 'topic:main');
    expect(gone.code).not.toBe(0);
    expect(gone.out).toContain("App 'renamed-push-app' not found");
    expect(existsSync(repo)).toBe(false);
  });
});
