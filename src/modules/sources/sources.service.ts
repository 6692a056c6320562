import { createReadStream, createWriteStream, existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ApiError } from '../../http/errors.ts';
import { type Clock } from '../../shared/clock.ts';
import { uuid } from '../../shared/ids.ts';
import { type Logger } from '../../shared/logger.ts';
import { type UserRow } from '../auth/principal.ts';
import { type UrlSigner } from '../logs/logs-url.ts';
import { type SourcesStore } from './sources.store.ts';

export const SOURCES_PREFIX = '/sources/';
const UPLOAD = 'source-upload';
const DOWNLOAD = 'source-download';
/** Unexpired sources one user may hold at once (each may carry up to `maxBytes`). */
const MAX_LIVE_PER_USER = 20;

export interface SourcesServiceDeps {
  store: SourcesStore;
  signer: UrlSigner;
  clock: Clock;
  logger: Logger;
  /** Where archives are kept: <state dir>/sources. */
  dir: string;
  apiUrl: () => string;
  maxBytes: number;
  ttlMs: number;
}

/**
 * The platform's Sources (developers.scalingo.com/sources): temporary, pre-authenticated upload and
 * download URLs for a tarball, used by `scalingo deploy <archive>`. The archive is streamed to a file;
 * URLs and files expire together.
 */
export function createSourcesService(deps: SourcesServiceDeps) {
  const { store, clock, signer } = deps;
  mkdirSync(deps.dir, { recursive: true });
  // Uploads cut by the last stop leave partial files: none of them can complete now.
  for (const f of readdirSync(deps.dir)) if (f.endsWith('.part')) rmSync(join(deps.dir, f), { force: true });
  const fileOf = (id: string) => join(deps.dir, `${id}.tar.gz`);
  const urlOf = (id: string, purpose: string) => `${deps.apiUrl()}${SOURCES_PREFIX}${id}?${signer.query(purpose, id)}`;

  /** The source a signed URL designates; 403 when the signature is wrong or the URL expired. */
  function authorised(purpose: string, id: string, token: string | undefined, timestamp: string | undefined) {
    const check = signer.check(purpose, token, timestamp, deps.ttlMs);
    if (!check.ok || check.subject !== id)
      throw ApiError.forbidden(
        check.ok || check.reason === 'invalid'
          ? 'this URL is not valid for this source'
          : 'this URL has expired: create a new source',
      );
    const row = store.byId(id);
    if (!row || row.expires_at <= clock.now())
      throw ApiError.notFound('source', 'this source has expired and was deleted');
    return row;
  }

  return {
    create(user: UserRow): { upload_url: string; download_url: string } {
      const now = clock.now();
      if (store.countLive(user.id, now) >= MAX_LIVE_PER_USER)
        throw ApiError.invalid(
          'source',
          `at most ${MAX_LIVE_PER_USER} unexpired sources per user: use or let some expire first`,
        );
      const id = uuid();
      store.insert({
        id,
        user_id: user.id,
        created_at: now,
        expires_at: now + deps.ttlMs,
        size: null,
        uploaded_at: null,
      });
      return { upload_url: urlOf(id, UPLOAD), download_url: urlOf(id, DOWNLOAD) };
    },

    /** PUT <upload_url>: the body streamed to a file, never more than `maxBytes`; a second PUT replaces it. */
    async upload(
      id: string,
      token: string | undefined,
      timestamp: string | undefined,
      length: string | undefined,
      body: ReadableStream<Uint8Array> | null,
    ): Promise<number> {
      authorised(UPLOAD, id, token, timestamp);
      if (length !== undefined && (!/^\d{1,15}$/.test(length) || Number(length) > deps.maxBytes))
        throw ApiError.payloadTooLarge(deps.maxBytes);
      if (!body) throw ApiError.badRequest('the archive is missing: PUT the .tar.gz as the request body');
      const part = join(deps.dir, `${id}.${uuid()}.part`);
      let size = 0;
      const limit = new Transform({
        transform(chunk: Buffer, _enc, done) {
          size += chunk.length;
          if (size > deps.maxBytes) return done(ApiError.payloadTooLarge(deps.maxBytes));
          done(null, chunk);
        },
      });
      try {
        await pipeline(
          Readable.fromWeb(body as import('node:stream/web').ReadableStream),
          limit,
          createWriteStream(part, { mode: 0o600 }),
        );
        if (size === 0) throw ApiError.badRequest('the archive is empty: PUT the .tar.gz as the request body');
        // The source may have been swept while the body was arriving.
        if (!store.byId(id)) throw ApiError.notFound('source', 'this source has expired and was deleted');
        await rename(part, fileOf(id));
      } catch (err) {
        await rm(part, { force: true });
        throw err instanceof ApiError
          ? err
          : ApiError.badRequest(`the upload was interrupted: ${(err as Error).message}`);
      }
      store.markUploaded(id, size, clock.now());
      return size;
    },

    /** GET <download_url>: the stored archive. */
    download(id: string, token: string | undefined, timestamp: string | undefined): { stream: Readable; size: number } {
      const row = authorised(DOWNLOAD, id, token, timestamp);
      if (row.size === null || !existsSync(fileOf(id)))
        throw ApiError.notFound('source', 'nothing was uploaded to this source yet');
      return { stream: createReadStream(fileOf(id)), size: row.size };
    },

    /**
     * A deployment's `source_url`: the emulator's own download URL becomes the stored file's path
     * (read directly, no HTTP round trip); anything else is left to the deployment (null).
     */
    localPathOf(sourceUrl: string): string | null {
      let url: URL;
      try {
        url = new URL(sourceUrl);
      } catch {
        return null;
      }
      const api = new URL(deps.apiUrl());
      if (url.host !== api.host || !url.pathname.startsWith(SOURCES_PREFIX)) return null;
      const id = url.pathname.slice(SOURCES_PREFIX.length);
      try {
        const row = authorised(
          DOWNLOAD,
          id,
          url.searchParams.get('token') ?? undefined,
          url.searchParams.get('timestamp') ?? undefined,
        );
        if (row.size === null || !existsSync(fileOf(id)))
          throw ApiError.notFound('source', 'nothing was uploaded to this source yet');
      } catch (err) {
        throw ApiError.invalid('source_url', `cannot be used: ${(err as Error).message}`);
      }
      return fileOf(id);
    },

    /** Expired sources go, rows and files (the platform deletes uploads once their links expire). */
    async sweep(): Promise<number> {
      const gone = store.expired(clock.now());
      for (const row of gone) {
        store.remove(row.id);
        await rm(fileOf(row.id), { force: true }).catch((err) =>
          deps.logger.warn({ err, source: row.id }, 'sources: could not delete an expired archive'),
        );
      }
      return gone.length;
    },
  };
}

export type SourcesService = ReturnType<typeof createSourcesService>;
