// What a project's tests look like with the emulator: one instance for the file, a reset before
// each test, time moved by hand, faults injected on purpose.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { startEmulator, type StartedEmulator } from 'scalingo-emulator';

let emu: StartedEmulator;

beforeAll(async () => {
  emu = await startEmulator({ config: { clock: 'manual' } });
});
afterAll(() => emu.stop());
beforeEach(() => emu.reset());

/** The client code under test would do this with its own HTTP client. */
async function call(method: string, path: string, body?: unknown, auth = `Basic ${btoa(`:${emu.token}`)}`) {
  const res = await fetch(`${emu.apiUrl}${path}`, { method, headers: { authorization: auth, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: (await res.json().catch(() => null)) as any };
}

describe('my deploy bot', () => {
  test('creates an app', async () => {
    const created = await call('POST', '/v1/apps', { app: { name: 'bot-made' } });
    expect(created.status).toBe(201);
    expect((await call('GET', '/v1/apps')).body.apps.map((a: { name: string }) => a.name)).toEqual(['bot-made']);
  });

  test('starts from an empty platform after reset()', async () => {
    expect((await call('GET', '/v1/apps')).body.apps).toEqual([]);
  });

  test('copes with the API answering 503 once', async () => {
    await emu.faults.add({ method: 'POST', path: '/v1/apps', status: 503, count: 1 });
    expect((await call('POST', '/v1/apps', { app: { name: 'retried' } })).status).toBe(503);
    expect((await call('POST', '/v1/apps', { app: { name: 'retried' } })).status).toBe(201);
    expect(emu.faults.list()).toEqual([]);
  });

  test('renews its bearer token when it expires', async () => {
    const exchanged = await call('POST', '/v1/tokens/exchange');
    const bearer = `Bearer ${exchanged.body.token}`;
    expect((await call('GET', '/v1/users/self', undefined, bearer)).status).toBe(200);
    emu.clock.advance(3601_000);
    expect((await call('GET', '/v1/users/self', undefined, bearer)).status).toBe(401);
  });

  test('runs against a second, separate emulator', async () => {
    const other = await startEmulator();
    try {
      expect(other.apiUrl).not.toBe(emu.apiUrl);
      await call('POST', '/v1/apps', { app: { name: 'only-in-first' } });
      const res = await fetch(`${other.apiUrl}/v1/apps`, { headers: { authorization: `Basic ${btoa(`:${other.token}`)}` } });
      expect(((await res.json()) as { apps: unknown[] }).apps).toEqual([]);
    } finally {
      await other.stop();
    }
  });

  test('returns to a snapshot', async () => {
    expect((await call('POST', '/v1/apps', { app: { name: 'kept-app' } })).status).toBe(201);
    const snap = await emu.snapshot();
    await call('POST', '/v1/apps', { app: { name: 'dropped-app' } });
    await emu.restore(snap);
    expect((await call('GET', '/v1/apps')).body.apps.map((a: { name: string }) => a.name)).toEqual(['kept-app']);
  });
});
