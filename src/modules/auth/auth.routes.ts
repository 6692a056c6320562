import { ApiRoutes } from '../../http/api-routes.ts';
import { ApiError } from '../../http/errors.ts';
import { parseWith, readJson } from '../../http/validate.ts';
import { isoDate } from '../../shared/clock.ts';
import { type Urls } from '../../shared/urls.ts';
import {
  bearerAnswer,
  createTokenBody,
  createTokenSchema,
  regionList,
  tokenEnvelope,
  tokenList,
  userEnvelope,
} from './auth.schemas.ts';
import { type AuthService, publicUser } from './auth.service.ts';
import { type TokenRow } from './auth.store.ts';

function tokenJson(t: TokenRow, secretValue?: string) {
  return {
    id: t.id,
    name: t.name,
    created_at: isoDate(t.created_at),
    last_used_at: isoDate(t.last_used_at),
    issued_at: isoDate(t.issued_at),
    ...(secretValue ? { token: secretValue } : {}),
  };
}

export function authRoutes(deps: {
  auth: AuthService;
  urls: () => Urls;
  regionName: string;
  regionDisplayName: string;
}) {
  const { auth } = deps;
  const r = new ApiRoutes('auth');

  // The API token is the credential: the route reads it from the basic header itself.
  r.add(
    {
      method: 'post',
      path: '/v1/tokens/exchange',
      summary: 'Exchange an API token for a bearer (one hour)',
      description: 'HTTP basic authentication: empty username, the API token as password.',
      auth: 'public',
      responses: { 200: bearerAnswer },
    },
    async (c) => {
      const header = c.req.header('authorization');
      if (!header || !/^basic\s/i.test(header))
        throw ApiError.unauthorized(
          'token exchange needs HTTP basic authentication: empty username, API token as password',
        );
      const decoded = Buffer.from(header.replace(/^basic\s+/i, ''), 'base64').toString('utf8');
      const apiToken = decoded.slice(decoded.indexOf(':') + 1);
      if (!apiToken) throw ApiError.unauthorized('no API token given as password');
      return c.json({ token: await auth.exchange(apiToken) });
    },
  );

  r.add(
    {
      method: 'post',
      path: '/v1/tokens',
      summary: 'Create an API token',
      description: 'The body is `{token: {name}}` (platform) or `{name}` (npm client).',
      auth: 'password',
      body: createTokenBody,
      rawBody: true,
      responses: { 201: tokenEnvelope },
    },
    async (c) => {
      const body = (await readJson(c)) as Record<string, unknown>;
      const input =
        body && typeof body === 'object' && typeof body.token === 'object' && body.token !== null ? body.token : body;
      const { name } = parseWith(createTokenSchema, input);
      const { row, secret } = auth.createToken(c.get('principal').user.id, name);
      return c.json({ token: tokenJson(row, secret) }, 201);
    },
  );

  r.add(
    { method: 'get', path: '/v1/tokens', summary: 'List API tokens', auth: 'password', responses: { 200: tokenList } },
    (c) => c.json({ tokens: auth.listTokens(c.get('principal').user.id).map((t) => tokenJson(t)) }),
  );

  r.add(
    {
      method: 'patch',
      path: '/v1/tokens/:id/renew',
      summary: 'Renew an API token (new secret)',
      auth: 'password',
      responses: { 200: tokenEnvelope },
    },
    (c, { params }) => {
      const { row, secret } = auth.renewToken(c.get('principal').user.id, params.id);
      return c.json({ token: tokenJson(row, secret) });
    },
  );

  r.add(
    {
      method: 'delete',
      path: '/v1/tokens/:id',
      summary: 'Delete an API token',
      auth: 'password',
      responses: { 204: null },
    },
    (c, { params }) => {
      auth.deleteToken(c.get('principal').user.id, params.id);
      return c.body(null, 204);
    },
  );

  r.add(
    { method: 'get', path: '/v1/users/self', summary: 'The user of the credentials', responses: { 200: userEnvelope } },
    (c) => c.json({ user: publicUser(c.get('principal').user) }),
  );

  r.add(
    { method: 'get', path: '/v1/regions', summary: 'Regions (the emulator is one)', responses: { 200: regionList } },
    (c) => {
      const u = deps.urls();
      return c.json({
        regions: [
          {
            name: deps.regionName,
            display_name: deps.regionDisplayName,
            api: u.api,
            // The git endpoint's host:port (the platform: ssh.<region>.scalingo.com:22).
            ssh: u.git ? u.git.replace(/^ssh:\/\/git@/, '') : `ssh.${deps.regionName}.localhost:22`,
            dashboard: `${u.api}/_emulator`,
            database_api: `${u.api}/_emulator/databases`,
            default: true,
          },
        ],
      });
    },
  );

  return r;
}
