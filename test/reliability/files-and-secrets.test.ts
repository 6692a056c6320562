import { chmodSync, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { startEmulator } from '../harness.ts';
import { eventually } from '../support/docker-cli.ts';
import { FakeLogsRuntime } from '../support/fake-logs-runtime.ts';

// What the emulator leaves on disk and in its log: the data directory is the owner's only (0700,
// the database and its -wal/-shm 0600, whatever the umask, fixed on an older directory), and the
// credentials of a webhook URL are sent as basic auth but never written to the log.
const mode = (p: string) => statSync(p).mode & 0o777;

describe('files: owner-only data directory and database', () => {
  const root = mkdtempSync(join(tmpdir(), 'emu-modes-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('created 0700 / 0600 under a permissive umask, and an older 0755 / 0644 directory is fixed at start', async () => {
    const dataDir = join(root, 'state');
    const db = join(dataDir, 'emulator.sqlite');
    const previous = process.umask(0);
    try {
      let h = await startEmulator({ inMemory: false, dataDir }, { runtime: new FakeLogsRuntime() });
      expect((await h.call('POST', '/v1/apps', { body: { app: { name: 'modes-app' } } })).status).toBe(201);
      expect(mode(dataDir)).toBe(0o700);
      for (const f of [db, `${db}-wal`, `${db}-shm`]) {
        expect(existsSync(f), f).toBe(true);
        expect(mode(f), f).toBe(0o600);
      }
      for (const key of ['jwt.key', 'logs.key'])
        if (existsSync(join(dataDir, key))) expect(mode(join(dataDir, key)), key).toBe(0o600);
      await h.stop();

      // An older start left world-readable files: the next start closes them.
      chmodSync(dataDir, 0o755);
      for (const f of [db, `${db}-wal`, `${db}-shm`]) if (existsSync(f)) chmodSync(f, 0o644);
      h = await startEmulator({ inMemory: false, dataDir }, { runtime: new FakeLogsRuntime() });
      expect((await h.call('GET', '/v1/apps/modes-app')).status).toBe(200); // same data
      expect(mode(dataDir)).toBe(0o700);
      for (const f of [db, `${db}-wal`, `${db}-shm`]) if (existsSync(f)) expect(mode(f), f).toBe(0o600);
      await h.stop();
    } finally {
      process.umask(previous);
    }
  });
});

describe('secrets: webhook URL credentials', () => {
  it('userinfo goes as HTTP basic auth, the URL is never logged with its password or secret query values, refusals are retried', async () => {
    // A receiver that refuses the first two deliveries (so the emulator logs warnings), then accepts.
    const seen: IncomingHttpHeaders[] = [];
    const paths: string[] = [];
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        seen.push(req.headers);
        paths.push(req.url ?? '');
        res.writeHead(seen.length <= 2 ? 500 : 200).end();
      });
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    const port = (server.address() as AddressInfo).port;
    let logged = '';
    const logger = pino(
      { level: 'debug' },
      new Writable({ write: (chunk, _enc, cb) => void ((logged += String(chunk)), cb()) }),
    );
    const h = await startEmulator(
      { notifiers: { webhookRetries: 3, webhookBackoffMs: 20 } as never },
      { runtime: new FakeLogsRuntime(), logger },
    );
    try {
      expect((await h.call('POST', '/v1/apps', { body: { app: { name: 'secret-hooks' } } })).status).toBe(201);
      const url = `http://hook-user:s3cr3t-pass@127.0.0.1:${port}/hook?access_token=tok-123456&page=2`;
      const platforms = (await h.call('GET', '/v1/notification_platforms')).body.notification_platforms as {
        id: string;
        name: string;
      }[];
      const webhook = platforms.find((p) => p.name === 'webhook')!.id;
      const created = await h.call('POST', '/v1/apps/secret-hooks/notifiers', {
        body: {
          notifier: { platform_id: webhook, name: 'hook', send_all_events: true, type_data: { webhook_url: url } },
        },
      });
      expect(created.status).toBe(201);
      expect(
        (await h.call('POST', '/v1/apps/secret-hooks/variables', { body: { variable: { name: 'A', value: '1' } } }))
          .status,
      ).toBe(201);
      await eventually(() => seen.length >= 3, { what: 'the third delivery (after two refusals)' });
      expect(seen[2].authorization).toBe(`Basic ${Buffer.from('hook-user:s3cr3t-pass').toString('base64')}`);
      expect(paths[2]).toBe('/hook?access_token=tok-123456&page=2');
      await eventually(() => (logged.match(/webhook notification refused/g) ?? []).length >= 2, {
        what: 'the warnings of the refusals',
      });
      expect(logged).not.toContain('s3cr3t-pass');
      expect(logged).not.toContain('tok-123456');
      expect(logged).toContain('http://***:***@127.0.0.1');
      expect(logged).toContain('page=2');
    } finally {
      await h.stop();
      await new Promise((ok) => server.close(ok));
    }
  });
});
