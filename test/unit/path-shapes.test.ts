import { Hono } from 'hono';
import { type Result } from 'hono/router';
import { TrieRouter } from 'hono/router/trie-router';
import { describe, expect, it } from 'vitest';
import { type AppEnv } from '../../src/http/env.ts';
import { MemoRouter } from '../../src/http/memo-router.ts';
import { chainOfMatch } from '../../src/http/sync-chain.ts';

// Matches remembered by a path's shape (src/http/path-shapes.ts): a path that differs from a remembered one in one
// segment of free text gets the same handlers, with that text as the same parameters' value, without matching.

/** A memo router over a trie router that counts the matches it is asked for. */
function counting(routes: [string, string][]) {
  const count = { n: 0 };
  const inner = new TrieRouter<string>();
  const router = new MemoRouter<string>({
    name: 'counting',
    add: inner.add.bind(inner),
    match: (m: string, p: string) => (count.n++, inner.match(m, p)),
  });
  const fresh = new TrieRouter<string>();
  for (const [m, p] of routes) {
    router.add(m, p, `${m} ${p}`);
    fresh.add(m, p, `${m} ${p}`);
  }
  return { router, fresh, matches: () => count.n };
}

/** A match as plain data: handlers and their parameters, in order (null-prototype objects compared as plain). */
const plain = (r: Result<string>) => r[0].map(([h, p]) => [h, { ...(p as Record<string, string>) }]);

// Routes of the emulator's kinds: middlewares on `*` and `/v1/*`, `:app` at two depths, a literal beside a
// parameter (`/v1/apps/collaboration` beside `/v1/apps/:app`), two parameters in one path, a wildcard sub-path.
const ROUTES: [string, string][] = [
  ['ALL', '*'],
  ['ALL', '/v1/*'],
  ['ALL', '/v1/apps/:app/*'],
  ['POST', '/v1/apps'],
  ['GET', '/v1/apps/:app'],
  ['DELETE', '/v1/apps/:app'],
  ['GET', '/v1/apps/collaboration'],
  ['GET', '/v1/apps/:app/containers/:id'],
  ['POST', '/v1/apps/:app/containers/:id/restart'],
  ['GET', '/v1/apps/:app/logs'],
];

describe('matches remembered by shape', () => {
  it('gives a new app the remembered handlers with its own name, without matching the path again', () => {
    const { router, fresh, matches } = counting(ROUTES);
    router.match('DELETE', '/v1/apps/first-app');
    expect(matches()).toBe(1);
    for (const name of ['second-app', 'x', 'a%20b', 'name.with.dots']) {
      const path = `/v1/apps/${name}`;
      expect(plain(router.match('DELETE', path))).toEqual(plain(fresh.match('DELETE', path)));
    }
    expect(matches()).toBe(1);
    // Another method has its own shapes.
    router.match('GET', '/v1/apps/second-app');
    expect(matches()).toBe(2);
  });

  it('matches a route segment, the same text twice, an empty segment and a different depth in full', () => {
    const { router, fresh, matches } = counting(ROUTES);
    router.match('GET', '/v1/apps/first-app');
    const full = [
      '/v1/apps/collaboration', // a literal beside `:app`
      '/v1/apps/apps', // a segment of a route (at another depth)
      '/v1/apps/:app', // the trie's own key for the parameter
      '/v1/apps/', // an empty segment
      '/v1/apps/first-app/logs', // another depth
    ];
    for (const path of full) {
      const before = matches();
      expect(plain(router.match('GET', path))).toEqual(plain(fresh.match('GET', path)));
      expect(matches(), path).toBe(before + 1);
    }
    const before = matches();
    router.match('GET', '/v1/apps/same/containers/same');
    router.match('GET', '/v1/apps/same/containers/other-same');
    expect(matches() - before).toBe(2);
  });

  it('agrees with a fresh trie on every path, in any order', () => {
    const { router, fresh } = counting(ROUTES);
    const segments = [
      'v1',
      'apps',
      'collaboration',
      'containers',
      'logs',
      'restart',
      'web-1',
      'my-app',
      'x',
      ':app',
      '',
    ];
    const paths: string[] = [];
    for (const a of segments) for (const b of segments) paths.push(`/v1/apps/${a}`, `/v1/apps/${a}/containers/${b}`);
    for (const a of segments) for (const b of segments) paths.push(`/v1/apps/${a}/${b}`, `/v1/${a}/${b}/restart`);
    // Twice over, the second time with shapes learned from the first.
    for (let round = 0; round < 2; round++)
      for (const method of ['GET', 'POST', 'DELETE'])
        for (const path of paths)
          expect(plain(router.match(method, path)), `${method} ${path}`).toEqual(plain(fresh.match(method, path)));
  });

  it('learns no shape once a route has a segment whose match reads its text', () => {
    for (const odd of ['/v1/n/:id{[0-9]+}', '/v1/o/:id?', '/v1/p/pre*']) {
      const { router, matches } = counting([...ROUTES, ['GET', odd]]);
      router.match('DELETE', '/v1/apps/first-app');
      router.match('DELETE', '/v1/apps/second-app');
      expect(matches(), odd).toBe(2);
    }
  });

  it('forgets the shapes when a route is added', () => {
    const { router, matches } = counting(ROUTES);
    router.match('DELETE', '/v1/apps/first-app');
    router.add('DELETE', '/v1/apps/second-app', 'literal');
    expect(router.match('DELETE', '/v1/apps/second-app')[0].map(([h]) => h)).toContain('literal');
    expect(matches()).toBe(2);
  });
});

describe('a chain matched by shape', () => {
  it('runs the same steps with the path parameter of its own request', async () => {
    const app = new Hono<AppEnv>({
      router: new MemoRouter(
        new TrieRouter(),
        chainOfMatch((err, c) => c.text(err.message, 500)),
      ),
    });
    const seen: string[] = [];
    app.use('/v1/apps/:app/*', (c, next) => {
      seen.push(`guard ${c.req.param('app')}`);
      return next();
    });
    app.delete('/v1/apps/:app', (c) => c.text(`deleted ${c.req.param('app')} ${c.req.query('current_name')}`));
    for (const name of ['first', 'second', 'caf%C3%A9']) {
      const res = await app.request(`/v1/apps/${name}?current_name=${name}`, { method: 'DELETE' });
      expect(await res.text()).toBe(`deleted ${decodeURIComponent(name)} ${decodeURIComponent(name)}`);
    }
    expect(seen).toEqual(['guard first', 'guard second', 'guard café']);
  });
});
