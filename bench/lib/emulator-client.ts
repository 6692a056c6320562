import { Pool } from 'undici';

/** The few API calls the sections need, over one keep-alive pool per server. */
export class ApiClient {
  readonly pool: Pool;
  private bearer: string | null = null;

  constructor(
    readonly api: string,
    connections = 16,
  ) {
    this.pool = new Pool(api, { connections, pipelining: 1, keepAliveTimeout: 30_000 });
  }

  get authHeader(): string {
    if (!this.bearer) throw new Error('no bearer yet: call exchange() first');
    return `Bearer ${this.bearer}`;
  }

  /** API token → bearer, as the official clients do before any other call. */
  async exchange(apiToken: string): Promise<string> {
    const res = await this.pool.request({
      method: 'POST',
      path: '/v1/tokens/exchange',
      headers: { authorization: `Basic ${Buffer.from(`:${apiToken}`).toString('base64')}`, accept: 'application/json' },
    });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`token exchange: ${res.statusCode} ${text}`);
    this.bearer = (JSON.parse(text) as { token: string }).token;
    return this.bearer;
  }

  async call(
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    body?: unknown,
  ): Promise<{ status: number; text: string; location?: string }> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.bearer) headers.authorization = `Bearer ${this.bearer}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await this.pool.request({
      method,
      path,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const location = res.headers.location;
    return {
      status: res.statusCode,
      text: await res.body.text(),
      location: typeof location === 'string' ? location : undefined,
    };
  }

  async expect(method: 'GET' | 'POST' | 'DELETE', path: string, status: number, body?: unknown): Promise<string> {
    const res = await this.call(method, path, body);
    if (res.status !== status)
      throw new Error(`${method} ${path}: expected ${status}, got ${res.status} ${res.text.slice(0, 300)}`);
    return res.text;
  }

  /**
   * POST /v1/apps/:app/scale, then its operation until done (every pollMs). 'unchanged' when the
   * API answered 200 (nothing to scale: no operation); a failed operation or another status throws.
   */
  async scale(
    app: string,
    containers: { name: string; amount: number; size?: string }[],
    opts: { pollMs?: number; timeoutMs?: number } = {},
  ): Promise<'done' | 'unchanged'> {
    const res = await this.call('POST', `/v1/apps/${app}/scale`, { containers });
    if (res.status === 200) return 'unchanged';
    if (res.status !== 202) throw new Error(`scale ${app}: ${res.status} ${res.text.slice(0, 300)}`);
    const opPath = new URL(String(res.location)).pathname;
    const deadline = performance.now() + (opts.timeoutMs ?? 180_000);
    for (;;) {
      const op = JSON.parse(await this.expect('GET', opPath, 200)) as { operation: { status: string; error?: string } };
      if (op.operation.status === 'done') return 'done';
      if (op.operation.status === 'error') throw new Error(`scale ${app} failed: ${op.operation.error}`);
      if (performance.now() > deadline)
        throw new Error(`scale ${app}: operation not done after ${opts.timeoutMs ?? 180_000} ms`);
      await new Promise((r) => setTimeout(r, opts.pollMs ?? 20));
    }
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
