import { Readable } from 'node:stream';
import { Hono } from 'hono';
import type { AppEnv } from '../../http/env.ts';
import { ApiError } from '../../http/errors.ts';
import { SOURCES_PREFIX, type SourcesService } from './sources.service.ts';

/**
 * `POST /v1/sources` (authenticated) and the pre-authenticated URLs it hands out, outside /v1 like
 * the attach and logs URLs: they carry their own signed token and take a raw .tar.gz body (the API
 * itself only takes JSON).
 */
export function sourcesRoutes(deps: { sources: SourcesService }) {
  const r = new Hono<AppEnv>();

  r.post('/v1/sources', (c) => c.json({ source: deps.sources.create(c.get('principal').user) }, 201));

  // The CLI PUTs with Content-Type application/x-gzip and Content-Length, and wants a 200.
  r.put(`${SOURCES_PREFIX}:id`, async (c) => {
    const size = await deps.sources.upload(c.req.param('id'), c.req.query('token'), c.req.query('timestamp'), c.req.header('content-length'), c.req.raw.body);
    return c.json({ size }, 200);
  });

  r.get(`${SOURCES_PREFIX}:id`, (c) => {
    const { stream, size } = deps.sources.download(c.req.param('id'), c.req.query('token'), c.req.query('timestamp'));
    return new Response(Readable.toWeb(stream) as ReadableStream, { status: 200, headers: { 'content-type': 'application/x-gzip', 'content-length': String(size) } });
  });

  // Anything else on these URLs (POST, DELETE…) is not how sources are used.
  r.all(`${SOURCES_PREFIX}:id`, () => {
    throw new ApiError(405, { error: 'a source URL takes PUT (upload) or GET (download)' }, { allow: 'GET, PUT' });
  });

  return r;
}
