import { PassThrough } from 'node:stream';
import { pino } from 'pino';
import { extract } from 'tar-stream';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/http/errors.ts';
import { type ContainerRow, type ContainersStore } from '../../src/modules/containers/containers.store.ts';
import { createAttacher, type TerminalClient } from '../../src/modules/one-off/attach-session.ts';
import { createAttachSigner } from '../../src/modules/one-off/attach-url.ts';
import { normaliseResize, resizeSchema, runSchema } from '../../src/modules/one-off/one-off.schemas.ts';
import { createSessions } from '../../src/modules/one-off/one-off.sessions.ts';
import { sanitizeUploadName, uploadsArchive } from '../../src/modules/one-off/uploads.ts';
import { type ContainerRuntime } from '../../src/runtime/runtime.ts';
import { ManualClock, systemClock } from '../../src/shared/clock.ts';

const ID = '65a1b2c3d4e5f60718293a4b';

describe('attach URLs', () => {
  it('are bound to their container, expire after the TTL, and refuse any altered token', () => {
    const clock = new ManualClock(1_700_000_000_000);
    const signer = createAttachSigner({ clock, ttlMs: 60_000 });
    const url = signer.url('http://127.0.0.1:5100', ID);
    const token = url.split('/attach/')[1];
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:5100\/attach\/[0-9a-f]{24}\.\d+\.[\w-]{43}$/);
    expect(signer.check(token)).toEqual({ ok: true, containerId: ID, expired: false });
    clock.advance(61_000);
    expect(signer.check(token)).toEqual({ ok: true, containerId: ID, expired: true });

    const [id, exp, mac] = token.split('.');
    expect(signer.check(`${'0'.repeat(24)}.${exp}.${mac}`)).toEqual({ ok: false }); // another container
    expect(signer.check(`${id}.${Number(exp) + 3600}.${mac}`)).toEqual({ ok: false }); // a later expiry
    expect(signer.check(`${id}.${exp}.${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}`)).toEqual({ ok: false });
    expect(signer.check('garbage')).toEqual({ ok: false });
    expect(signer.check(undefined)).toEqual({ ok: false });
    // Another emulator process (another key) does not accept it.
    expect(createAttachSigner({ clock, ttlMs: 60_000 }).check(token)).toEqual({ ok: false });
  });
});

describe('upload names', () => {
  it('keep only the last path segment, so nothing lands outside /tmp/uploads', () => {
    expect(sanitizeUploadName('dump.sql')).toBe('dump.sql');
    expect(sanitizeUploadName('../../etc/passwd')).toBe('passwd');
    expect(sanitizeUploadName('..\\..\\boot.ini')).toBe('boot.ini');
    expect(sanitizeUploadName('/abs/path/data.tar.gz')).toBe('data.tar.gz');
    expect(sanitizeUploadName('we\u0000ird\nname')).toBe('weirdname');
    for (const bad of ['', '..', '.', 'dir/', '../..', '\u0001'])
      expect(() => sanitizeUploadName(bad), bad).toThrow(ApiError);
  });

  it('are packed under tmp/uploads/ with the directories first', async () => {
    const tar = await uploadsArchive([{ name: 'a.txt', data: Buffer.from('hello') }], new Date(0));
    const entries: { name: string; type: string; body: string }[] = [];
    const ex = extract();
    ex.on('entry', (h, stream, next) => {
      let body = '';
      stream.on('data', (c) => (body += String(c)));
      stream.on('end', () => (entries.push({ name: h.name, type: h.type ?? '', body }), next()));
    });
    await new Promise<void>((ok) => (ex.on('finish', () => ok()), ex.end(tar)));
    expect(entries).toEqual([
      { name: 'tmp/', type: 'directory', body: '' },
      { name: 'tmp/uploads/', type: 'directory', body: '' },
      { name: 'tmp/uploads/a.txt', type: 'file', body: 'hello' },
    ]);
  });
});

describe('one-off request bodies', () => {
  it('run: the Go client shape passes; command is required; env values become strings', () => {
    const go = runSchema().parse({
      command: 'rails console',
      env: { TERM: 'xterm', CLIENT_OS: 'linux' },
      size: 'M',
      detached: false,
      has_uploads: false,
    });
    expect(go).toMatchObject({ command: 'rails console', size: 'M', detached: false });
    expect(runSchema().parse({ command: 'x', env: { N: 3, B: true } }).env).toEqual({ N: '3', B: 'true' });
    expect(runSchema().safeParse({}).success).toBe(false);
    expect(runSchema().safeParse({ command: '' }).success).toBe(false);
    expect(runSchema().safeParse({ command: ['ls'] }).success).toBe(false);
    expect(runSchema().safeParse({ command: 'x', env: { '': 'v' } }).success).toBe(false);
  });

  it('resize: strings (CLI) or integers (DOC), Width/Height of old CLIs, bounded', () => {
    expect(resizeSchema().parse({ width: '80', height: '24' })).toEqual({ width: 80, height: 24 });
    expect(resizeSchema().parse({ width: 80, height: 24 })).toEqual({ width: 80, height: 24 });
    expect(resizeSchema().parse(normaliseResize({ Width: '100', Height: '30' }))).toEqual({ width: 100, height: 30 });
    // A terminal without a size: the CLI sends "0" × "0", accepted (the route then leaves the TTY alone).
    expect(resizeSchema().parse({ width: '0', height: '0' })).toEqual({ width: 0, height: 0 });
    for (const bad of [
      { width: '80x', height: 24 },
      { width: -1, height: 24 },
      { width: '-1', height: '24' },
      { width: 80 },
      { width: 1.5, height: 2 },
      { width: 80, height: 10_001 },
    ]) {
      expect(resizeSchema().safeParse(bad).success, JSON.stringify(bad)).toBe(false);
    }
  });
});

describe("a stop while the terminal's start is under way", () => {
  it('waits for the start, then stops the normal way (SIGTERM, grace): no forced removal, state stays `stopping`', async () => {
    const row = {
      id: ID,
      app_id: 'app',
      type: 'one-off',
      type_index: 1,
      size: 'M',
      command: 'sh',
      engine_id: 'eng-1',
      state: 'booting',
      host_port: null,
      deployment_id: null,
      detached: 0,
      created_at: 0,
      deleted_at: null,
    } as ContainerRow;
    const rows = new Map([[row.id, { ...row }]]);
    const store = {
      container: (id: string) => rows.get(id),
      setEngine: (id: string, _e: string | null, _p: number | null, state: string) =>
        void (rows.get(id)!.state = state),
      setState: (id: string, state: string) => void (rows.get(id)!.state = state),
      markDeleted: (id: string, at: number, state = 'stopped') =>
        void Object.assign(rows.get(id)!, { state, deleted_at: at }),
    } as unknown as ContainersStore;
    const calls: string[] = [];
    let releaseStart!: () => void;
    let startAsked!: () => void;
    const asked = new Promise<void>((r) => (startAsked = r));
    const runtime = {
      onEvent: () => () => undefined,
      attach: async () => new PassThrough(),
      start: (id: string) => {
        calls.push(`start ${id}`);
        startAsked();
        return new Promise((r) => (releaseStart = () => r({ engineId: id, state: 'running', hostPort: null })));
      },
      stop: async (id: string, grace: number) => void calls.push(`stop ${id} ${grace}`),
      remove: async (id: string) => void calls.push(`remove ${id}`),
      kill: async (id: string, sig: string) => void calls.push(`kill ${id} ${sig}`),
      wait: () => new Promise<number>(() => undefined),
      resize: async () => undefined,
    } as unknown as ContainerRuntime;
    const logger = pino({ level: 'silent' });
    const sessions = createSessions({
      runtime,
      store,
      clock: new ManualClock(),
      logger,
      instanceId: 'i',
      stopGraceSeconds: 3,
      keepEndedMs: 1000,
    });
    const s = sessions.open(row);
    sessions.created(s, 'eng-1');
    const client: TerminalClient = {
      send: () => undefined,
      end: () => undefined,
      onInput: () => undefined,
      onClose: () => undefined,
    };
    const connected = createAttacher({ runtime, store, sessions, logger, idleMs: 60_000, clock: systemClock }).connect(
      s,
      () => client,
    );
    await asked; // Docker is starting the process (it may already print) and has not answered yet
    store.setState(row.id, 'stopping');
    const stopped = sessions.shutdown(s);
    releaseStart();
    await connected;
    await stopped;
    expect(calls).toEqual(['start eng-1', 'stop eng-1 3']);
    expect(rows.get(row.id)!.state).toBe('stopping');
  });
});
