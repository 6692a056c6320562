// The few calls `up` makes to an emulator, through its public API only, so that it drives an
// emulator it started and one already running alike. Errors become one UpError line.
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { UpError } from './up-error.ts';

const TIMEOUT_MS = 60_000;

export interface ApiClient {
  apiUrl: string;
  /** The credentials, for the calls that are not JSON (build output). */
  headers: Record<string, string>;
  /** Aborted when `up` is stopped: every call then ends at once. */
  signal?: AbortSignal;
  get<T = unknown>(path: string): Promise<T>;
  /** GET answering undefined on 404 (an app not created yet). */
  find<T = unknown>(path: string): Promise<T | undefined>;
  send<T = unknown>(method: 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<T>;
  upload(url: string, file: string, size: number): Promise<void>;
}

/** A signal aborted after `ms`, or earlier with `stop`. */
export function callSignal(ms: number, stop?: AbortSignal): AbortSignal {
  return stop ? AbortSignal.any([stop, AbortSignal.timeout(ms)]) : AbortSignal.timeout(ms);
}

export function apiClient(apiUrl: string, token: string, stop?: AbortSignal): ApiClient {
  const auth = `Basic ${Buffer.from(`:${token}`).toString('base64')}`;
  async function call(method: string, path: string, body?: unknown, allow404 = false): Promise<unknown> {
    let res: Response;
    try {
      res = await fetch(`${apiUrl}${path}`, {
        method,
        headers: {
          authorization: auth,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: callSignal(TIMEOUT_MS, stop),
      });
    } catch (err) {
      if (stop?.aborted) throw stop.reason;
      throw new UpError(`the emulator at ${apiUrl} does not answer (${(err as Error).message})`);
    }
    const text = await res.text();
    if (allow404 && res.status === 404) return undefined;
    if (!res.ok) throw new UpError(`${method} ${path}: ${res.status} ${describeError(text)}`, res.status);
    return text ? JSON.parse(text) : undefined;
  }
  return {
    apiUrl,
    headers: { authorization: auth },
    signal: stop,
    get: <T>(path: string) => call('GET', path) as Promise<T>,
    find: <T>(path: string) => call('GET', path, undefined, true) as Promise<T | undefined>,
    send: <T>(method: string, path: string, body?: unknown) => call(method, path, body) as Promise<T>,
    async upload(url, file, size) {
      const res = await fetch(url, {
        method: 'PUT',
        headers: { 'content-type': 'application/x-gzip', 'content-length': String(size) },
        body: Readable.toWeb(createReadStream(file)) as ReadableStream,
        duplex: 'half',
        signal: callSignal(10 * TIMEOUT_MS, stop),
      } as RequestInit);
      if (!res.ok) throw new UpError(`uploading the code: ${res.status} ${describeError(await res.text())}`);
    },
  };
}

/** The platform's error bodies ({error}, {errors: {field: [msg]}}) as one line. */
function describeError(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: string; errors?: Record<string, string[]> };
    if (body.error) return body.error;
    if (body.errors)
      return Object.entries(body.errors)
        .map(([f, m]) => `${f} ${m.join(', ')}`)
        .join('; ');
  } catch {}
  return text.slice(0, 300);
}

/**
 * Retries a call the emulator refused with 409 (the app is booting, the previous deployment is still
 * cleaning up) for up to a minute: `up` waits for the platform, as a user would retry.
 */
export async function retryConflicts<T>(call: () => Promise<T>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await call();
    } catch (err) {
      if ((err as UpError).status !== 409 || Date.now() > deadline) throw err;
      await new Promise((ok) => setTimeout(ok, 250));
    }
  }
}
