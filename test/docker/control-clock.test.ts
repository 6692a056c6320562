import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LABELS } from '../../src/runtime/runtime.ts';
import { type Harness, startEmulator } from '../harness.ts';
import { waitForStatus } from '../support/apps.ts';
import { dockerPs, eventually, removeInstance } from '../support/docker-cli.ts';

// Platform time of real containers on the manual clock: an operation whose containers never listen
// times out only when the clock passes the boot timeout; a crashed container is restarted only when
// the clock passes the crash back-off.
const ADMIN = 'admin-token-for-docker-clock-000';
// web listens unless HANG is set; then it never does (a boot that cannot finish).
const PROCFILE =
  'web: if [ -n "$HANG" ]; then exec sleep 100000; fi; mkdir -p /tmp/www && echo ok > /tmp/www/index.html && exec httpd -f -p $PORT -h /tmp/www\n';

describe('manual clock with real containers', () => {
  let h: Harness;
  const dir = mkdtempSync(join(tmpdir(), 'emu-clock-app-'));
  const admin = (method: string, path: string, body?: unknown) =>
    h.call(method, `/_emulator${path}`, { body, as: { bearer: ADMIN } });
  const advance = async (ms: number) => expect((await admin('POST', '/clock/advance', { ms })).status).toBe(200);
  const webs = () =>
    dockerPs([`${LABELS.instance}=${h.emu.instanceId}`, `${LABELS.appName}=clock-app`, `${LABELS.type}=web`]);
  const operation = async (location: string) =>
    (await h.call('GET', new URL(location).pathname)).body.operation as { status: string; error?: string };

  beforeAll(async () => {
    writeFileSync(join(dir, 'Procfile'), PROCFILE);
    h = await startEmulator({
      adminToken: ADMIN,
      clock: 'manual',
      intervals: {
        bootTimeoutMs: 60_000,
        bootGraceMs: 300,
        stopGraceSeconds: 1,
        crashBackoffMs: 30_000,
        crashBackoffMaxMs: 60_000,
      },
      apps: [{ name: 'clock-app', dir }],
    });
    await waitForStatus(h, 'clock-app', 'running');
  });
  afterAll(async () => {
    await h.stop();
    removeInstance(h.emu.instanceId);
    rmSync(dir, { recursive: true, force: true });
  });

  it('a restart whose containers never listen runs until the clock passes the boot timeout, then ends in error', async () => {
    const [old] = webs();
    expect(
      (await h.call('PUT', '/v1/apps/clock-app/variables', { body: { variables: [{ name: 'HANG', value: '1' }] } }))
        .status,
    ).toBe(200);
    const res = await h.call('POST', '/v1/apps/clock-app/restart', { body: { scope: ['web'] } });
    expect(res.status).toBe(202);
    const location = res.headers.get('location')!;
    // The replacement runs in Docker but never answers; real time passing changes nothing.
    await eventually(() => webs().length === 2, { what: 'the replacement container' });
    await new Promise((r) => setTimeout(r, 1500));
    expect((await operation(location)).status).toBe('running');

    await advance(30_000);
    await new Promise((r) => setTimeout(r, 300));
    expect((await operation(location)).status).toBe('running');
    await advance(31_000);
    const op = await eventually(
      async () => ((await operation(location)).status === 'error' ? operation(location) : null),
      { what: 'the operation to time out' },
    );
    expect(op.error).toMatch(/did not listen on \$PORT .* within 60 s/);
    // The replacement is gone, the container from before still serves.
    await eventually(() => webs().length === 1, { what: 'the replacement removed' });
    expect(webs()[0].id).toBe(old.id);
    // Back to a web that listens, for what follows.
    const hang = (
      (await h.call('GET', '/v1/apps/clock-app/variables')).body.variables as { id: string; name: string }[]
    ).find((v) => v.name === 'HANG')!;
    expect((await h.call('DELETE', `/v1/apps/clock-app/variables/${hang.id}`)).status).toBe(204);
  });

  it('a crashed container comes back only once the clock passes the crash back-off', async () => {
    const [before] = webs();
    expect(
      (await admin('POST', '/faults', { fault: { type: 'crash', app: 'clock-app', container: 'web-1' } })).status,
    ).toBe(201);
    await eventually(
      async () =>
        ((await h.call('GET', '/v1/apps/clock-app/events')).body.events as { type: string }[]).some(
          (e) => e.type === 'crash',
        ),
      { what: 'the crash event' },
    );
    await eventually(() => !webs().some((c) => c.id === before.id), { what: 'the crashed container to leave Docker' });
    // Real time passes, the back-off (30 s of clock time) does not: nothing restarts.
    await new Promise((r) => setTimeout(r, 1500));
    expect(webs()).toEqual([]);
    await advance(30_000);
    const after = await eventually(() => webs().find((c) => c.state === 'running'), {
      what: 'web-1 restarted',
      timeoutMs: 30_000,
    });
    expect(after.id).not.toBe(before.id);
  });
});
