import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync } from 'node:fs';
import { get as httpGet } from 'node:http';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { c as tarCreate } from 'tar';
import { type Harness } from '../harness.ts';
import { eventually, giveUp } from './docker-cli.ts';

export const FIXTURES = resolve(import.meta.dirname, '../../fixtures/apps');

/** Copies a fixture app to a fresh temp dir (tests edit it). */
export function copyFixture(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), `emu-${name}-`));
  cpSync(join(FIXTURES, name), dir, { recursive: true });
  return dir;
}

/** A local git repository holding a fixture (for git_source). */
export function gitRepoOf(name: string): string {
  const dir = copyFixture(name);
  const git = (...a: string[]) =>
    execFileSync('git', ['-C', dir, ...a], {
      stdio: 'ignore',
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 't',
        GIT_AUTHOR_EMAIL: 't@t',
        GIT_COMMITTER_NAME: 't',
        GIT_COMMITTER_EMAIL: 't@t',
      },
    });
  git('init', '-q');
  git('add', '.');
  git('commit', '-qm', 'fixture');
  return dir;
}

/** A .tar.gz of a fixture (or of a folder: `dir`) with one top-level folder, as the platform's archives are. */
export async function archiveOf(name: string, dir = join(FIXTURES, name)): Promise<string> {
  const out = join(mkdtempSync(join(tmpdir(), 'emu-archive-')), `${name}.tar.gz`);
  await tarCreate({ gzip: true, file: out, cwd: dirname(dir) }, [basename(dir)]);
  return out;
}

/** Test timings: short boots, stops and back-offs (the defaults are the platform's). */
export const FAST = {
  bootTimeoutMs: 20_000,
  bootGraceMs: 300,
  stopGraceSeconds: 1,
  crashBackoffMs: 50,
  crashBackoffMaxMs: 200,
  watchDebounceMs: 200,
};

export async function waitForStatus(
  h: Harness,
  app: string,
  status: string,
  timeoutMs = 60_000,
  as: 'dev' | 'other' | 'trial' = 'dev',
) {
  return eventually(
    async () => {
      const r = await h.call('GET', `/v1/apps/${app}`, { as });
      return r.body?.app?.status === status ? r.body.app : null;
    },
    { timeoutMs, what: `app ${app} to be ${status}` },
  );
}

export async function waitForDeployment(
  h: Harness,
  app: string,
  predicate: (d: { status: string; id: string }) => boolean = (d) =>
    ['success', 'build-error', 'crashed-error', 'timeout-error'].includes(d.status),
  timeoutMs = 60_000,
) {
  return eventually(
    async () => {
      const r = await h.call('GET', `/v1/apps/${app}/deployments`);
      const d = r.body?.deployments?.[0];
      return d && predicate(d) ? d : null;
    },
    { timeoutMs, what: `a finished deployment of ${app}` },
  );
}

export async function waitForOperation(
  h: Harness,
  location: string,
  timeoutMs = 60_000,
  as: 'dev' | 'other' | 'trial' = 'dev',
) {
  const path = new URL(location).pathname;
  return eventually(
    async () => {
      const r = await h.call('GET', path, { as });
      return ['done', 'error'].includes(r.body?.operation?.status) ? r.body.operation : null;
    },
    { timeoutMs, what: `operation ${path}` },
  );
}

/** GET through the emulator's router with Host: <app>.localhost (fetch cannot set Host). */
export function routerGet(
  port: number,
  app: string,
  path = '/',
): Promise<{ status: number; body: string; headers: import('node:http').IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const req = httpGet(
      { host: '127.0.0.1', port, path, headers: { host: `${app}.localhost:${port}` }, agent: false },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
      },
    );
    req.on('error', reject);
  });
}

type ApiCall = (method: string, path: string) => Promise<{ body: any }>;

/**
 * Waits for an addon to be `running`; `error` ends the wait at once with the addon's reason (its
 * status_message). `onMessage` sees every status message shown meanwhile (the provisioning steps).
 */
export async function waitForAddon(
  call: ApiCall,
  app: string,
  id: string,
  timeoutMs: number,
  onMessage: (m: string) => void = () => undefined,
) {
  return eventually(
    async () => {
      const a = (await call('GET', `/v1/apps/${app}/addons/${id}`)).body.addon;
      if (a.status_message) onMessage(a.status_message);
      if (a.status === 'error')
        throw giveUp(`addon ${id} of ${app} ended in error: ${a.status_message ?? 'no reason given'}`);
      return a.status === 'running' ? a : null;
    },
    { timeoutMs, intervalMs: 250, what: `addon ${id} of ${app} running` },
  );
}
