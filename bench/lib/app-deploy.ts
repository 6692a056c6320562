import { execFile } from 'node:child_process';
import { get as httpGet } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { c as tarCreate } from 'tar';
import { type ApiClient } from './emulator-client.ts';
import { type Child } from './processes.ts';
import { sleep } from './stats.ts';

/** Deploying an app through the API and waiting for it, as the deploy, memory and growth sections do. */

const run = promisify(execFile);
export const docker = async (...args: string[]) =>
  (await run('docker', args, { maxBuffer: 64 * 1024 * 1024 })).stdout.trim();

/**
 * The baseline's raw start of a web container, as the emulator starts one (tini, 512 MB, PORT 5000 published on
 * loopback, CONTAINER named): its id.
 */
export const runRawWeb = (o: { label: string; image: string; container: string; command: string[] }) =>
  docker(
    'run',
    '-d',
    '--label',
    o.label,
    '--init',
    '--memory',
    '512m',
    '-p',
    '127.0.0.1::5000',
    '-e',
    'PORT=5000',
    '-e',
    `CONTAINER=${o.container}`,
    o.image,
    ...o.command,
  );

const ROUTER_LINE = /Router\s+http:\/\/<app>\.localhost:(\d+)/;

/** The router's port, from the emulator's start banner. */
export function routerPortOf(emu: Child): number {
  const port = Number(ROUTER_LINE.exec(emu.output())?.[1]);
  if (!port) throw new Error(`no router in the banner:\n${emu.output()}`);
  return port;
}

/** dir's files (not dir itself) as a .tar.gz, the form POST /deployments {source_url} takes. */
export async function archiveOf(dir: string, file: string): Promise<string> {
  await tarCreate({ gzip: true, file, cwd: dir, portable: true }, ['.']);
  return file;
}

/**
 * POST /v1/apps/:app/deployments {source_url: archive}; a 409 (the previous deployment of the app
 * still finishing) is retried. Returns performance.now() of the accepted POST's start and the deployment's id.
 */
export async function postDeployment(
  client: ApiClient,
  app: string,
  archive: string,
  timeoutMs = 60_000,
): Promise<{ t0: number; id: string }> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const t0 = performance.now();
    const res = await client.call('POST', `/v1/apps/${app}/deployments`, { deployment: { source_url: archive } });
    if (res.status === 201) return { t0, id: (JSON.parse(res.text) as { deployment: { id: string } }).deployment.id };
    if (res.status !== 409 || performance.now() > deadline)
      throw new Error(`POST /v1/apps/${app}/deployments: ${res.status} ${res.text.slice(0, 300)}`);
    await sleep(50);
  }
}

/** Polls GET /v1/apps/:app until its status is `running` (a deployment done, containers started). */
export async function untilRunning(client: ApiClient, app: string, timeoutMs = 180_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const body = JSON.parse(await client.expect('GET', `/v1/apps/${app}`, 200)) as { app: { status: string } };
    if (body.app.status === 'running') return;
    if (performance.now() > deadline)
      throw new Error(`${app} not running after ${timeoutMs} ms (status ${body.app.status})`);
    await sleep(100);
  }
}

/** The body the router serves for Host: <app>.localhost, or '' while it does not answer 200. */
export function routerPage(port: number, app: string): Promise<string> {
  return new Promise((ok) => {
    const req = httpGet(
      { host: '127.0.0.1', port, path: '/', headers: { host: `${app}.localhost:${port}` }, agent: false },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (body += c));
        res.on('end', () => ok(res.statusCode === 200 ? body : ''));
        res.on('error', () => ok(''));
      },
    );
    req.on('error', () => ok(''));
  });
}

/** An HTTP GET / of 127.0.0.1:<port>: its body if it answered 200, else ''. */
export function directPage(port: number): Promise<string> {
  return new Promise((ok) => {
    const req = httpGet({ host: '127.0.0.1', port, path: '/', agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (body += c));
      res.on('end', () => ok(res.statusCode === 200 ? body : ''));
      res.on('error', () => ok(''));
    });
    req.on('error', () => ok(''));
  });
}

/** Polls `page` every `everyMs` until its body holds `marker`. */
export async function untilServed(
  page: () => Promise<string>,
  marker: string,
  timeoutMs = 180_000,
  everyMs = 20,
): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await page()).includes(marker)) {
    if (performance.now() > deadline) throw new Error(`"${marker}" never served`);
    await sleep(everyMs);
  }
}

/**
 * Deletes an app (its containers and images go with it), ignoring failures: used in finally blocks.
 * With the app's id, images the deletion did not remove (yet) are removed, so no bench leaves any behind.
 */
export async function deleteApp(client: ApiClient | undefined, app: string, appId?: string): Promise<void> {
  await client?.call('DELETE', `/v1/apps/${app}?current_name=${app}`).catch(() => undefined);
  if (!appId) return;
  const images = async () =>
    (await docker('images', '-q', '--filter', `label=io.scalingo-emulator.app-id=${appId}`).catch(() => ''))
      .split('\n')
      .filter(Boolean);
  for (let i = 0; i < 50 && (await images()).length; i++) await sleep(100);
  const left = [...new Set(await images())];
  if (left.length) await docker('rmi', '-f', ...left).catch(() => undefined);
}

/**
 * Removes what an emulator instance left in Docker (containers labelled with its instance or owner id),
 * after it was stopped: a bench must leave the shared engine as it found it.
 */
export async function removeInstanceContainers(instanceId: string | null): Promise<number> {
  if (!instanceId) return 0;
  let removed = 0;
  for (const label of ['io.scalingo-emulator.instance', 'io.scalingo-emulator.owner']) {
    const ids = (await docker('ps', '-aq', '--filter', `label=${label}=${instanceId}`).catch(() => ''))
      .split('\n')
      .filter(Boolean);
    if (ids.length) await docker('rm', '-f', ...ids).catch(() => undefined);
    removed += ids.length;
  }
  return removed;
}

/** The instance id an emulator labels its containers with (meta table of its data dir), or null. */
export function instanceIdOf(dataDir: string): string | null {
  try {
    const db = new Database(join(dataDir, 'emulator.sqlite'), { readonly: true, fileMustExist: true });
    try {
      return (
        (db.prepare("SELECT value FROM meta WHERE key = 'instance_id'").pluck().get() as string | undefined) ?? null
      );
    } finally {
      db.close();
    }
  } catch {
    return null;
  }
}
