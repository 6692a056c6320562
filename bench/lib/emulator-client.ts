import { Pool } from 'undici';

/** The few API calls the sections need, over one keep-alive pool per server. */
export class ApiClient {
  readonly pool: Pool;
  private bearer: string | null = null;

  constructor(readonly api: string, connections = 16) {
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

  async call(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<{ status: number; text: string }> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.bearer) headers.authorization = `Bearer ${this.bearer}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await this.pool.request({ method, path, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: res.statusCode, text: await res.body.text() };
  }

  async expect(method: 'GET' | 'POST' | 'DELETE', path: string, status: number, body?: unknown): Promise<string> {
    const res = await this.call(method, path, body);
    if (res.status !== status) throw new Error(`${method} ${path}: expected ${status}, got ${res.status} ${res.text.slice(0, 300)}`);
    return res.text;
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
