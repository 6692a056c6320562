import { Readable } from 'node:stream';
import { ApiRoutes } from '../../http/api-routes.ts';
import { signedUrlQuery } from '../../http/api-schemas.ts';
import { ApiError } from '../../http/errors.ts';
import { sourceEnvelope, uploadAnswer } from './sources.schemas.ts';
import { SOURCES_PREFIX, type SourcesService } from './sources.service.ts';

/**
 * `POST /v1/sources` (authenticated) and the pre-authenticated URLs it hands out, outside /v1 like
 * the attach and logs URLs: they carry their own signed token and take a raw .tar.gz body (the API
 * itself only takes JSON).
 */
export function sourcesRoutes(deps: { sources: SourcesService }) {
  const r = new ApiRoutes('sources');

  r.add(
    {
      method: 'post',
      path: '/v1/sources',
      summary: 'Create a source: signed upload and download URLs for an archive',
      responses: { 201: sourceEnvelope },
    },
    (c) => c.json({ source: deps.sources.create(c.get('principal').user) }, 201),
  );

  // The CLI PUTs with Content-Type application/x-gzip and Content-Length, and wants a 200.
  r.add(
    {
      method: 'put',
      path: `${SOURCES_PREFIX}:id`,
      summary: "Upload a source's archive (the raw .tar.gz body)",
      description: 'The body is the archive itself (`application/x-gzip`), streamed to disk up to the configured size.',
      auth: 'signed',
      query: signedUrlQuery,
      responses: { 200: uploadAnswer },
    },
    async (c, { params, query }) => {
      const size = await deps.sources.upload(
        params.id,
        query.token,
        query.timestamp,
        c.req.header('content-length'),
        c.req.raw.body,
      );
      return c.json({ size }, 200);
    },
  );

  r.add(
    {
      method: 'get',
      path: `${SOURCES_PREFIX}:id`,
      summary: "Download a source's archive",
      auth: 'signed',
      query: signedUrlQuery,
      responses: { 200: { contentType: 'application/x-gzip', description: 'The archive as uploaded' } },
    },
    (_c, { params, query }) => {
      const { stream, size } = deps.sources.download(params.id, query.token, query.timestamp);
      return new Response(Readable.toWeb(stream) as ReadableStream, {
        status: 200,
        headers: { 'content-type': 'application/x-gzip', 'content-length': String(size) },
      });
    },
  );

  // Anything else on these URLs (POST, DELETE…) is not how sources are used. A method-not-allowed
  // fallback rather than a route: it stays `all` (undeclared, like middleware), so it answers 405
  // whatever the credentials, as before.
  r.all(`${SOURCES_PREFIX}:id`, () => {
    throw new ApiError(405, { error: 'a source URL takes PUT (upload) or GET (download)' }, { allow: 'GET, PUT' });
  });

  return r;
}
