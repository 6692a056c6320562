import { type UserConfig } from '../../config/schema.ts';
import { type Db, tx } from '../../db/database.ts';
import { ApiError } from '../../http/errors.ts';
import { type Clock } from '../../shared/clock.ts';
import { prefixedUuid, secret, sha256, uuid } from '../../shared/ids.ts';
import { type AuthStore, type TokenRow, type UserRecord } from './auth.store.ts';
import { hashPassword, verifyPassword } from './passwords.ts';
import { type Principal, type UserRow } from './principal.ts';

export const STARTUP_TOKEN_NAME = 'emulator-startup';
export const DASHBOARD_TOKEN_NAME = 'emulator-dashboard';
// A hash that no password matches, until the background hashing of syncUsers replaces it.
const PENDING_HASH = 'pending';
const ISSUER = 'scalingo-emulator';
// jose (JWT signing and verification) is loaded by the first exchange or bearer check, not at start.
let jose: Promise<typeof import('jose')> | undefined;
const loadJose = () => (jose ??= import('jose'));
// An HS256 signature in base64url: 32 bytes, 43 characters, the end of every bearer this service signs.
const SIGNATURE_LENGTH = 43;
const BEARER_PREFIX = 'Bearer ';
/** The key of a verified bearer: its signature, whatever the value (a short one is its own key). */
const signatureOf = (bearer: string) => bearer.slice(-SIGNATURE_LENGTH);

interface VerifiedBearer {
  bearer: string;
  /** `Bearer <bearer>`: the header the hot path compares whole. */
  header: string;
  userId: string;
  tokenId: string;
  exp: number;
  principal?: Principal;
}

export interface AuthServiceDeps {
  db: Db;
  store: AuthStore;
  clock: Clock;
  jwtSecret: Uint8Array;
  bearerTtlSeconds: number;
}

/** API token secrets look like the platform's: `tk-us-<random>`. */
function newTokenSecret(): string {
  return `tk-us-${secret(36)}`;
}

export function publicUser(u: UserRow) {
  return { id: u.id, username: u.username, fullname: u.fullname, email: u.email, flags: {} as Record<string, boolean> };
}

export function createAuthService(deps: AuthServiceDeps) {
  const { store, clock } = deps;
  // Verified bearers → principal, so the hot path neither re-verifies the signature nor queries the
  // database. Every change to tokens goes through this service, which drops the entries it affects.
  // Keyed by the JWT's signature (its last 43 characters): a lookup hashes those, not the whole ~290-character bearer
  // anew each request; the entry keeps the whole bearer, which must be the one asked for.
  const verified = new Map<string, VerifiedBearer>();
  const verifiedEntry = (bearer: string) => {
    const hit = verified.get(signatureOf(bearer));
    return hit?.bearer === bearer ? hit : undefined;
  };
  // Users only change at start (syncUsers): read once, then served from memory.
  const users = new Map<string, UserRow>();
  let passwordsReady: Promise<void> = Promise.resolve();
  // last_used_at is written at most once a minute per token: reads stay free of writes.
  const touched = new Map<string, number>();

  function cachedUser(id: string): UserRow | undefined {
    let u = users.get(id);
    if (!u) {
      const row = store.userById(id);
      if (!row) return undefined;
      u = stripPassword(row);
      users.set(id, u);
    }
    return u;
  }

  function principalFor(userId: string, tokenId: string | null): Principal {
    const user = cachedUser(userId);
    if (!user) throw ApiError.unauthorized();
    return { user, tokenId };
  }

  function forgetToken(tokenId: string): void {
    for (const [k, v] of verified) if (v.tokenId === tokenId) verified.delete(k);
  }

  function touch(tokenId: string, now = clock.now()): void {
    if ((touched.get(tokenId) ?? 0) + 60_000 > now) return;
    touched.set(tokenId, now);
    store.touchToken(tokenId, now);
  }

  /** Resolves an API token secret to its row; revoked or unknown → 401. */
  function tokenFromSecret(value: string): TokenRow {
    const row = store.tokenByHash(sha256(value));
    if (!row) throw ApiError.unauthorized('invalid API token');
    return row;
  }

  return {
    /**
     * Seeds the config's users (and their fixed tokens) into the database, idempotently. Password
     * hashes are (re)computed in the background — scrypt takes ~50 ms a user; logins wait for it.
     */
    syncUsers(configured: UserConfig[]): void {
      users.clear();
      const toHash: { id: string; password: string; current: string | null }[] = [];
      tx(deps.db, () => {
        for (const u of configured) {
          const existing = store.userByLogin(u.username);
          const record = {
            email: u.email,
            fullname: u.fullname,
            password_hash: existing?.password_hash ?? PENDING_HASH,
            payment_method: u.paymentMethod ? 1 : 0,
          };
          let id: string;
          if (existing) {
            id = existing.id;
            store.updateUser({ id, ...record });
          } else {
            id = prefixedUuid('us');
            store.insertUser({ id, username: u.username, created_at: clock.now(), ...record });
          }
          toHash.push({ id, password: u.password, current: existing?.password_hash ?? null });
          const hashes = u.apiTokens.map(sha256);
          store.pruneFixedTokens(id, hashes);
          u.apiTokens.forEach((_token, i) => {
            const hash = hashes[i];
            if (store.tokenByHash(hash)) return;
            store.insertToken({
              id: uuid(),
              user_id: id,
              name: `config-token-${i + 1}`,
              token_hash: hash,
              created_at: clock.now(),
              issued_at: clock.now(),
              last_used_at: null,
              fixed: 1,
            });
          });
        }
      });
      passwordsReady = Promise.all(
        toHash.map(async (u) => {
          if (u.current && (await verifyPassword(u.password, u.current))) return;
          const hash = await hashPassword(u.password);
          if (deps.db.open) store.setPasswordHash(u.id, hash);
        }),
      ).then(() => undefined);
    },

    /** HTTP basic with a username (or e-mail) and password. */
    async login(login: string, password: string): Promise<UserRow> {
      await passwordsReady;
      const user = store.userByLogin(login);
      if (!user || !(await verifyPassword(password, user.password_hash)))
        throw ApiError.unauthorized('invalid credentials');
      return stripPassword(user);
    },

    /** Resolves once the configured passwords are hashed (the emulator's stop waits for it). */
    passwordsReady: () => passwordsReady,

    userByLogin(login: string): UserRow | undefined {
      const u = store.userByLogin(login);
      return u && stripPassword(u);
    },
    userById(id: string): UserRow | undefined {
      return cachedUser(id);
    },
    userByEmail(email: string): UserRow | undefined {
      const u = store.userByEmail(email);
      return u && stripPassword(u);
    },

    createToken(userId: string, name: string): { row: TokenRow; secret: string } {
      const value = newTokenSecret();
      const now = clock.now();
      const row: TokenRow = {
        id: uuid(),
        user_id: userId,
        name,
        token_hash: sha256(value),
        created_at: now,
        issued_at: now,
        last_used_at: null,
        fixed: 0,
      };
      store.insertToken(row);
      return { row, secret: value };
    },

    /** The token printed at start: one per user, replaced at each start (the old secret stops working). */
    rotateStartupToken(userId: string): string {
      return tx(deps.db, () => {
        store.deleteTokensByName(userId, STARTUP_TOKEN_NAME);
        return this.createToken(userId, STARTUP_TOKEN_NAME).secret;
      });
    },

    /** A token with a known secret exists (the start-up token again after a snapshot is restored). */
    ensureToken(userId: string, name: string, value: string): void {
      if (store.tokenByHash(sha256(value))) return;
      const now = clock.now();
      store.insertToken({
        id: uuid(),
        user_id: userId,
        name,
        token_hash: sha256(value),
        created_at: now,
        issued_at: now,
        last_used_at: null,
        fixed: 0,
      });
    },

    /** Drops every cached bearer and user: the tables changed underneath (control plane reset/restore). */
    forgetAll(): void {
      verified.clear();
      users.clear();
      touched.clear();
    },

    listTokens(userId: string): TokenRow[] {
      return store.tokensOfUser(userId);
    },

    ownToken(userId: string, tokenId: string): TokenRow {
      const row = store.tokenById(tokenId);
      if (!row || row.user_id !== userId) throw ApiError.notFound('token');
      return row;
    },

    deleteToken(userId: string, tokenId: string): void {
      this.ownToken(userId, tokenId);
      store.deleteToken(tokenId);
      forgetToken(tokenId);
    },

    renewToken(userId: string, tokenId: string): { row: TokenRow; secret: string } {
      const row = this.ownToken(userId, tokenId);
      const value = newTokenSecret();
      const now = clock.now();
      store.renewToken(tokenId, sha256(value), now);
      forgetToken(tokenId);
      return { row: { ...row, token_hash: sha256(value), issued_at: now }, secret: value };
    },

    /**
     * A bearer for a user without a password or an API token: the dashboard's session, vouched for
     * by the admin token. It rests on one token row per user (`emulator-dashboard`), so deleting
     * that token (DELETE /v1/tokens/:id) ends every dashboard session of the user.
     */
    async sessionBearer(userId: string): Promise<string> {
      const row =
        store.tokensOfUser(userId).find((t) => t.name === DASHBOARD_TOKEN_NAME) ??
        this.createToken(userId, DASHBOARD_TOKEN_NAME).row;
      return this.exchange(row);
    },

    /** API token (or its row) → signed JWT bearer valid for bearerTtlSeconds. */
    async exchange(apiToken: string | TokenRow): Promise<string> {
      const row = typeof apiToken === 'string' ? tokenFromSecret(apiToken) : apiToken;
      touch(row.id);
      const now = Math.floor(clock.now() / 1000);
      const { SignJWT } = await loadJose();
      return new SignJWT({ tid: row.id })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject(row.user_id)
        .setIssuer(ISSUER)
        .setIssuedAt(now)
        .setExpirationTime(now + deps.bearerTtlSeconds)
        .sign(deps.jwtSecret);
    },

    /**
     * The principal of `Bearer <jwt>` when that exact bearer was verified before, is not expired and its
     * API token was checked since the last change to tokens; otherwise undefined, and authenticate() decides.
     * Synchronous, without parsing the header: the request path's cache of verified bearers.
     */
    cachedPrincipal(header: string | undefined): Principal | undefined {
      if (header === undefined) return undefined;
      const hit = verified.get(signatureOf(header));
      if (!hit?.principal || hit.header !== header) return undefined;
      const now = clock.now();
      if (hit.exp * 1000 <= now) return undefined;
      touch(hit.tokenId, now);
      return hit.principal;
    },

    /**
     * Authorization header → principal. Accepts `Bearer <jwt>`, and HTTP basic with an empty
     * username and an API token as password (the spec's samples use both). With allowPassword,
     * basic with a username (or e-mail) and password is accepted too (the auth service's token routes).
     */
    async authenticate(header: string | undefined, opts: { allowPassword?: boolean } = {}): Promise<Principal> {
      if (!header) throw ApiError.unauthorized('no authentication provided: send Authorization: Bearer <token>');
      const [scheme, ...rest] = header.trim().split(/\s+/);
      const value = rest.join(' ');
      if (/^bearer$/i.test(scheme) && value) {
        const now = clock.now();
        const hit = verifiedEntry(value);
        let claims = hit && hit.exp * 1000 > now ? hit : undefined;
        if (!claims) {
          if (hit) verified.delete(signatureOf(value));
          const { jwtVerify, errors: joseErrors } = await loadJose();
          try {
            const { payload } = await jwtVerify(value, deps.jwtSecret, {
              issuer: ISSUER,
              currentDate: new Date(now),
              algorithms: ['HS256'],
            });
            if (typeof payload.sub !== 'string' || typeof payload.tid !== 'string' || typeof payload.exp !== 'number')
              throw new Error('claims');
            claims = {
              bearer: value,
              header: `${BEARER_PREFIX}${value}`,
              userId: payload.sub,
              tokenId: payload.tid,
              exp: payload.exp,
            };
          } catch (err) {
            if (err instanceof joseErrors.JWTExpired)
              throw ApiError.unauthorized('token expired: exchange your API token for a new bearer token');
            throw ApiError.unauthorized('invalid bearer token');
          }
          if (verified.size > 5000) verified.clear();
          verified.set(signatureOf(value), claims);
        }
        touch(claims.tokenId);
        if (claims.principal) return claims.principal;
        // A revoked API token revokes the bearers made from it (checked once, then on every change).
        if (!store.tokenById(claims.tokenId)) {
          verified.delete(signatureOf(value));
          throw ApiError.unauthorized('token revoked');
        }
        claims.principal = principalFor(claims.userId, claims.tokenId);
        return claims.principal;
      }
      if (/^basic$/i.test(scheme) && value) {
        const decoded = Buffer.from(value, 'base64').toString('utf8');
        const colon = decoded.indexOf(':');
        if (colon < 0) throw ApiError.unauthorized('malformed basic authentication');
        const username = decoded.slice(0, colon);
        const password = decoded.slice(colon + 1);
        if (username === '') {
          const row = tokenFromSecret(password);
          touch(row.id);
          return principalFor(row.user_id, row.id);
        }
        if (opts.allowPassword) return { user: await this.login(username, password), tokenId: null };
        throw ApiError.unauthorized('basic authentication takes an empty username and an API token as password');
      }
      throw ApiError.unauthorized('unsupported authorization scheme: use Bearer');
    },
  };
}

function stripPassword(u: UserRecord): UserRow {
  const { password_hash: _ignored, ...rest } = u;
  return rest;
}

export type AuthService = ReturnType<typeof createAuthService>;
