import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';

/**
 * The baseline: a bare Hono app on @hono/node-server, started the same way as the emulator.
 * GET /          hello world (the reference)
 * GET /json      a fixed JSON body (the emulator's own app JSON, when --json-file is given), so the
 *                cost of the payload alone can be told apart from the cost of the emulator's logic
 * POST /v1/apps, DELETE /v1/apps/:name
 *                the same request shapes as a create+delete pair, without any work: the ceiling
 *                of the client and HTTP stack for that loop
 */
const { values } = parseArgs({ options: { 'json-file': { type: 'string' } } });
const jsonBody = values['json-file'] ? readFileSync(values['json-file'], 'utf8') : '{"hello":"world"}';

const app = new Hono();
app.get('/', (c) => c.text('Hello Hono!'));
app.get('/json', (c) => c.body(jsonBody, 200, { 'content-type': 'application/json' }));
app.post('/v1/apps', async (c) => {
  const body = (await c.req.json()) as { app?: { name?: string } };
  return c.json({ app: { name: body.app?.name ?? null } }, 201);
});
app.delete('/v1/apps/:name', (c) => c.body(null, 204));

const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => {
  console.log(`listening http://127.0.0.1:${info.port}`);
});
const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
