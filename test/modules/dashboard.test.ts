import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startEmulator } from '../harness.ts';

// The dashboard's server side: static files with a strict policy, and the session exchange
// (admin token → a user's bearer) with its failure paths.
let h: Harness;
beforeAll(async () => {
  h = await startEmulator();
});
afterAll(() => h.stop());

const session = (headers: Record<string, string>, body?: string) =>
  fetch(`${h.api}/_emulator/dashboard/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
const admin = () => ({ authorization: `Bearer ${h.emu.adminToken}` });

describe('dashboard files', () => {
  it('serves the page, its script and style with a same-origin-only policy and no referrer', async () => {
    const page = await fetch(`${h.api}/_emulator/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(page.headers.get('content-security-policy')).toContain("connect-src 'self'");
    // Inline styles only (xterm.js writes <style> elements): scripts stay this origin's files.
    expect(page.headers.get('content-security-policy')).toContain("style-src 'self' 'unsafe-inline';");
    expect(page.headers.get('content-security-policy')).not.toMatch(/script-src[^;]*unsafe/);
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page.headers.get('cache-control')).toBe('no-store');
    const html = await page.text();
    expect(html).toContain('<script src="app.js"></script>');
    expect(html).not.toMatch(/https?:\/\//);
    const js = await fetch(`${h.api}/_emulator/app.js`);
    expect(js.headers.get('content-type')).toContain('text/javascript');
    expect(await js.text()).toContain('/_emulator/dashboard/session');
    expect((await fetch(`${h.api}/_emulator/style.css`)).headers.get('content-type')).toContain('text/css');
  });

  it('redirects /_emulator to the page, keeping the query', async () => {
    const res = await fetch(`${h.api}/_emulator?token=abc`, { redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/_emulator/?token=abc');
  });

  it('answers 404 for other files', async () => {
    expect((await fetch(`${h.api}/_emulator/secret.txt`)).status).toBe(404);
  });
});

describe('POST /_emulator/dashboard/session', () => {
  it('trades the admin token for a bearer of the first user, which the API accepts', async () => {
    const res = await session(admin());
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      session: { bearer: string; user: { username: string } };
      users: { username: string }[];
    };
    expect(body.session.user.username).toBe('dev');
    expect(body.users.map((u) => u.username)).toEqual(['dev', 'other', 'trial']);
    const self = await h.call('GET', '/v1/users/self', { as: { bearer: body.session.bearer } });
    expect(self.status).toBe(200);
    expect(self.body.user.username).toBe('dev');
  });

  it('gives a bearer of the user picked', async () => {
    const res = await session(admin(), JSON.stringify({ user: 'other@example.test' }));
    const { session: s } = (await res.json()) as { session: { bearer: string } };
    expect((await h.call('GET', '/v1/users/self', { as: { bearer: s.bearer } })).body.user.username).toBe('other');
  });

  it('refuses no token, a wrong token and a user API token (401)', async () => {
    const cases: Record<string, string>[] = [
      {},
      { authorization: 'Bearer ad-wrong-token-0000000000' },
      { authorization: `Bearer ${await h.bearer()}` },
      { authorization: `Basic ${Buffer.from(`:${h.emu.adminToken}`).toString('base64')}` },
    ];
    for (const headers of cases) {
      const res = await session(headers);
      expect(res.status).toBe(401);
      expect(Object.keys((await res.json()) as object)).toEqual(['error']);
    }
  });

  it('answers 422 for an unknown user or field, 400 for malformed JSON, 413 for a large body', async () => {
    const unknown = await session(admin(), JSON.stringify({ user: 'nobody' }));
    expect(unknown.status).toBe(422);
    expect(((await unknown.json()) as { errors: Record<string, string[]> }).errors.user[0]).toContain(
      'is not a configured user',
    );
    expect((await session(admin(), JSON.stringify({ user: 'dev', admin: true }))).status).toBe(422);
    // The platform's own system user (it signs alert events) is not a configured user.
    expect((await session(admin(), JSON.stringify({ user: 'scalingo-platform' }))).status).toBe(422);
    expect((await session(admin(), '{"user":')).status).toBe(400);
    expect((await session(admin(), JSON.stringify({ user: 'x'.repeat(10_000) }))).status).toBe(413);
  });

  it('reuses one token row per user: deleting it ends the dashboard sessions', async () => {
    const first = ((await (await session(admin())).json()) as { session: { bearer: string } }).session.bearer;
    await session(admin());
    const tokens = await h.call('GET', '/v1/tokens', { as: { bearer: first } });
    const rows = (tokens.body.tokens as { id: string; name: string }[]).filter((t) => t.name === 'emulator-dashboard');
    expect(rows).toHaveLength(1);
    expect((await h.call('DELETE', `/v1/tokens/${rows[0].id}`)).status).toBe(204);
    expect((await h.call('GET', '/v1/users/self', { as: { bearer: first } })).status).toBe(401);
  });
});

describe('GET /_emulator/dashboard/apps/:app/alert-states', () => {
  it('tells whether each alert fires, for the admin token only', async () => {
    await h.call('POST', '/v1/apps', { body: { app: { name: 'alerting-app' } } });
    const url = `${h.api}/_emulator/dashboard/apps/alerting-app/alert-states?ids=al-1,bad%20id`;
    expect((await fetch(url)).status).toBe(401);
    const res = await fetch(url, { headers: admin() });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ alert_states: { 'al-1': false } });
    expect(
      (await fetch(`${h.api}/_emulator/dashboard/apps/no-such-app/alert-states`, { headers: admin() })).status,
    ).toBe(404);
  });
});
