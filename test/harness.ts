import { loadConfig } from '../src/config/load.ts';
import { type ConfigInput } from '../src/config/schema.ts';
import { createEmulator, type Emulator, type EmulatorOptions } from '../src/emulator.ts';

// Fixed API tokens of the test users (config `apiTokens`), so tests need no login dance.
export const TOKENS = {
  dev: 'tk-us-test-dev-000000000000000000000000',
  other: 'tk-us-test-other-0000000000000000000000',
  trial: 'tk-us-test-trial-0000000000000000000000',
} as const;

export const TEST_USERS = [
  {
    username: 'dev',
    email: 'dev@example.test',
    password: 'dev-password',
    fullname: 'Dev',
    paymentMethod: true,
    apiTokens: [TOKENS.dev],
  },
  {
    username: 'other',
    email: 'other@example.test',
    password: 'other-password',
    fullname: 'Other',
    paymentMethod: true,
    apiTokens: [TOKENS.other],
  },
  {
    username: 'trial',
    email: 'trial@example.test',
    password: 'trial-password',
    fullname: 'Trial',
    paymentMethod: false,
    apiTokens: [TOKENS.trial],
  },
];

export function testConfig(overrides: ConfigInput = {}) {
  return loadConfig({
    ignoreDefaultFile: true,
    env: {},
    // Addons are stand-ins unless a test asks for real servers (they need the Debian-built images).
    overrides: {
      port: 0,
      routerPort: 0,
      sshPort: 0,
      inMemory: true,
      logLevel: 'silent',
      validateResponses: true,
      users: TEST_USERS,
      addons: { servers: false },
      ...overrides,
    } as ConfigInput,
  });
}

export interface Harness {
  emu: Emulator;
  api: string;
  /** fetch against the API with HTTP basic (empty user, API token) unless `auth` says otherwise. */
  call(
    method: string,
    path: string,
    opts?: CallOptions,
  ): Promise<{ status: number; headers: Headers; body: any; text: string }>;
  bearer(token?: string): Promise<string>;
  stop(): Promise<void>;
}

export interface CallOptions {
  body?: unknown;
  /** Raw body text (sent as is). */
  raw?: string;
  headers?: Record<string, string>;
  /** 'dev' | 'other' | 'trial' (API token as basic), a bearer string, or null for none. */
  as?: keyof typeof TOKENS | { bearer: string } | null;
}

export async function startEmulator(overrides: ConfigInput = {}, opts: EmulatorOptions = {}): Promise<Harness> {
  const emu = createEmulator(testConfig(overrides), opts);
  await emu.start();
  await emu.ready();
  const api = emu.urls.api;
  const h: Harness = {
    emu,
    api,
    async call(method, path, o = {}) {
      const headers: Record<string, string> = { accept: 'application/json', ...o.headers };
      const as = o.as === undefined ? 'dev' : o.as;
      if (typeof as === 'string') headers.authorization = `Basic ${Buffer.from(`:${TOKENS[as]}`).toString('base64')}`;
      else if (as) headers.authorization = `Bearer ${as.bearer}`;
      let body: string | undefined = o.raw;
      if (o.body !== undefined) {
        body = JSON.stringify(o.body);
        headers['content-type'] ??= 'application/json';
      }
      const res = await fetch(`${api}${path}`, { method, headers, body });
      const text = await res.text();
      let parsed: unknown;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = undefined;
      }
      return { status: res.status, headers: res.headers, body: parsed, text };
    },
    async bearer(token = TOKENS.dev) {
      const res = await fetch(`${api}/v1/tokens/exchange`, {
        method: 'POST',
        headers: { authorization: `Basic ${Buffer.from(`:${token}`).toString('base64')}` },
      });
      if (res.status !== 200) throw new Error(`exchange failed: ${res.status} ${await res.text()}`);
      return ((await res.json()) as { token: string }).token;
    },
    stop: () => emu.stop(),
  };
  return h;
}
