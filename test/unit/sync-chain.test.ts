import { type ErrorHandler, Hono } from 'hono';
import { RegExpRouter } from 'hono/router/reg-exp-router';
import { SmartRouter } from 'hono/router/smart-router';
import { TrieRouter } from 'hono/router/trie-router';
import { describe, expect, it } from 'vitest';
import { type AppEnv } from '../../src/http/env.ts';
import { MemoRouter } from '../../src/http/memo-router.ts';
import { chainOfMatch } from '../../src/http/sync-chain.ts';

// The HTTP app's router (src/http/app.ts): hono's, remembered per method and path, each match of several handlers
// run as one chain. The chain must keep hono's compose rules; what it adds is that a chain of synchronous steps
// answers without a promise.
function appWith(
  onError: ErrorHandler<AppEnv> = (err, c) => c.json({ error: err.message }, 500),
  inner: 'trie' | 'smart' = 'trie',
) {
  const app = new Hono<AppEnv>({
    router: new MemoRouter(
      inner === 'trie' ? new TrieRouter() : new SmartRouter({ routers: [new RegExpRouter(), new TrieRouter()] }),
      chainOfMatch(onError),
    ),
  });
  app.onError(onError);
  app.notFound((c) => c.json({ resource: 'route' }, 404));
  return app;
}

describe('the chain of a matched request', () => {
  it('answers synchronously when every step does, asynchronously as soon as one step is', async () => {
    const app = appWith();
    app.use('*', (_c, next) => next());
    app.get('/sync', (c) => c.text('sync'));
    app.use('/slow', async (_c, next) => {
      await new Promise((r) => setTimeout(r, 1));
      await next();
    });
    app.get('/slow', (c) => c.text('slow'));
    const sync = app.fetch(new Request('http://x/sync'));
    expect(sync).toBeInstanceOf(Response);
    expect(await (sync as Response).text()).toBe('sync');
    const slow = app.fetch(new Request('http://x/slow'));
    expect(slow).toBeInstanceOf(Promise);
    expect(await (await slow).text()).toBe('slow');
  });

  it('runs the steps in order, each one seeing the answer of those after it once next() returns', async () => {
    const app = appWith();
    const seen: string[] = [];
    app.use('*', async (c, next) => {
      seen.push('outer in');
      await next();
      seen.push(`outer out ${c.res.status}`);
    });
    app.use('*', (_c, next) => {
      seen.push('inner');
      return next();
    });
    app.get('/x', (c) => c.text('created', 201));
    const res = await app.request('/x');
    expect(res.status).toBe(201);
    expect(seen).toEqual(['outer in', 'inner', 'outer out 201']);
  });

  it("answers a step's error with the app's error handler at that step: the steps around it see that answer", async () => {
    const app = appWith();
    const statuses: number[] = [];
    app.use('*', async (c, next) => {
      await next();
      statuses.push(c.res.status);
    });
    app.use('/sync-throw', () => {
      throw new Error('refused before the route');
    });
    app.get('/sync-throw', (c) => c.text('never'));
    app.get('/async-throw', async () => {
      await Promise.resolve();
      throw new Error('refused by the route');
    });
    const a = await app.request('/sync-throw');
    expect(a.status).toBe(500);
    expect(await a.json()).toEqual({ error: 'refused before the route' });
    const b = await app.request('/async-throw');
    expect(await b.json()).toEqual({ error: 'refused by the route' });
    expect(statuses).toEqual([500, 500]);
  });

  it("ends a chain that nothing answered with the app's not-found answer, seen by the steps before", async () => {
    const app = appWith();
    let seen = 0;
    app.use('*', async (c, next) => {
      await next();
      seen = c.res.status;
    });
    app.use('/v1/*', (_c, next) => next());
    const res = await app.request('/v1/nothing-here');
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ resource: 'route' });
    expect(seen).toBe(404);
  });

  it("reads the path's parameters in every step, with the router hono picks by default too", async () => {
    for (const inner of ['trie', 'smart'] as const) {
      const app = appWith(undefined, inner);
      const keys: (string | undefined)[] = [];
      app.use('/v1/apps/:app/*', (c, next) => {
        keys.push(c.req.param('app'));
        return next();
      });
      app.get('/v1/apps/:app/containers/:id', (c) => c.json(c.req.param()));
      const res = await app.request('/v1/apps/my-app/containers/web-1');
      expect(await res.json()).toEqual({ app: 'my-app', id: 'web-1' });
      expect(keys).toEqual(['my-app']);
      // The same path again: the remembered match gives the same parameters.
      expect(await (await app.request('/v1/apps/my-app/containers/web-1')).json()).toEqual({
        app: 'my-app',
        id: 'web-1',
      });
      expect(await (await app.request('/v1/apps/other/containers/web-2')).json()).toEqual({
        app: 'other',
        id: 'web-2',
      });
    }
  });
});

describe('MemoRouter', () => {
  /** A memo router over a trie router that counts the matches it is asked for. */
  function countingMemoRouter() {
    const count = { n: 0 };
    const inner = new TrieRouter<string>();
    const router = new MemoRouter({
      name: 'counting',
      add: inner.add.bind(inner),
      match: (m: string, p: string) => (count.n++, inner.match(m, p)),
    });
    return { router, matches: () => count.n };
  }

  it('matches a method and path once, and matches again after a route is added', () => {
    const { router, matches } = countingMemoRouter();
    router.add('GET', '/a/:id', 'a');
    expect(router.match('GET', '/a/1')).toBe(router.match('GET', '/a/1'));
    expect(matches()).toBe(1);
    router.match('POST', '/a/1');
    // '/a/2' has the shape of '/a/1' (path-shapes.ts): not matched again.
    router.match('GET', '/a/2');
    expect(matches()).toBe(2);
    router.add('GET', '/b', 'b');
    router.match('GET', '/a/2');
    expect(matches()).toBe(3);
  });

  it('keeps the answers of each method apart for the same path', () => {
    const { router } = countingMemoRouter();
    router.add('GET', '/a/:id', 'get');
    router.add('POST', '/a/:id', 'post');
    const handlersOf = (m: string) => router.match(m, '/a/1')[0].map(([h]) => h);
    for (let i = 0; i < 2; i++) {
      expect(handlersOf('GET')).toEqual(['get']);
      expect(handlersOf('POST')).toEqual(['post']);
      expect(handlersOf('DELETE')).toEqual([]);
    }
  });

  it('counts the paths of every method towards its bound', () => {
    const { router, matches } = countingMemoRouter();
    router.add('GET', '/a/*', 'a');
    router.match('GET', '/a/first');
    // The same text twice: no shape is learned from these paths, each one is matched and kept.
    for (let i = 0; i < 500; i++) for (const m of ['POST', 'PUT']) router.match(m, `/a/${i}/${i}`);
    const before = matches();
    router.match('GET', '/a/first');
    expect(matches() - before).toBe(1);
  });

  it('keeps a bounded number of paths, and never a long one', () => {
    const { router, matches } = countingMemoRouter();
    router.add('GET', '/a/*', 'a');
    const long = `/a/${'x'.repeat(300)}`;
    router.match('GET', long);
    router.match('GET', long);
    expect(matches()).toBe(2);
    router.match('GET', '/a/first');
    for (let i = 0; i < 1_000; i++) router.match('GET', `/a/${i}/${i}`);
    const before = matches();
    // The table was emptied when full: the first path is matched again.
    router.match('GET', '/a/first');
    expect(matches() - before).toBe(1);
  });
});
