import { readFileSync, rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startEmulator, TEST_USERS } from '../harness.ts';
import { fingerprint, type KeyPair, keyPair } from '../support/ssh-keys.ts';

// /v1/keys as go-scalingo sends it (keys.go: {"key":{"name","content"}} → 201 {key}; DELETE → 204)
// and as the CLI uses it (keys-add reads a .pub file, keys-remove finds the id by name).
describe('SSH keys (/v1/keys)', () => {
  let h: Harness;
  const laptop = keyPair('ed25519', 'me@laptop');
  const rsa = keyPair('rsa');
  const configured = keyPair('ed25519', 'from-config');
  const pairs: KeyPair[] = [laptop, rsa, configured];
  beforeAll(async () => {
    h = await startEmulator({
      users: TEST_USERS.map((u) =>
        u.username === 'other' ? { ...u, sshKeys: [configured.publicKey, 'not a key'] } : u,
      ),
    });
  });
  afterAll(async () => {
    await h.stop();
    for (const p of pairs) rmSync(p.dir, { recursive: true, force: true });
  });

  it('adds a key from a .pub file, normalised, with its fingerprint; lists, shows and removes it', async () => {
    const res = await h.call('POST', '/v1/keys', {
      body: { key: { name: 'Laptop', content: `${readFileSync(`${laptop.privateKey}.pub`, 'utf8')}` } },
    });
    expect(res.status).toBe(201);
    expect(res.body.key).toMatchObject({
      name: 'Laptop',
      content: laptop.publicKey,
      fingerprint: fingerprint(laptop),
      owner: { username: 'dev' },
    });
    expect(res.body.key.id).toMatch(/^[0-9a-f]{24}$/);
    const list = await h.call('GET', '/v1/keys');
    expect(list.body.keys.map((k: { name: string }) => k.name)).toEqual(['Laptop']);
    expect((await h.call('GET', `/v1/keys/${res.body.key.id}`)).body.key.fingerprint).toBe(fingerprint(laptop));
    const events = await h.call('GET', '/v1/events');
    expect(events.body.events[0]).toMatchObject({
      type: 'new_key',
      type_data: { name: 'Laptop', fingerprint: fingerprint(laptop) },
    });
    expect((await h.call('DELETE', `/v1/keys/${res.body.key.id}`)).status).toBe(204);
    expect((await h.call('GET', '/v1/keys')).body.keys).toEqual([]);
    expect((await h.call('GET', '/v1/events')).body.events[0]).toMatchObject({
      type: 'delete_key',
      type_data: { name: 'Laptop' },
    });
  });

  it('refuses garbage, private keys, several keys at once, blanks and missing fields', async () => {
    const add = (key: unknown) => h.call('POST', '/v1/keys', { body: { key } });
    expect((await add({ name: 'x', content: 'hello world' })).body.errors.content[0]).toMatch(
      /not a valid SSH public key/,
    );
    expect((await add({ name: 'x', content: 'ssh-ed25519 AAAA' })).status).toBe(422);
    expect((await add({ name: 'x', content: readFileSync(laptop.privateKey, 'utf8') })).body.errors.content[0]).toMatch(
      /private key/,
    );
    expect(
      (await add({ name: 'x', content: `${laptop.publicKey}\n${rsa.publicKey}\n` })).body.errors.content[0],
    ).toMatch(/one public key at a time/);
    expect((await add({ name: ' ', content: laptop.publicKey })).body).toEqual({
      errors: { name: ["can't be blank"] },
    });
    expect((await add({ name: 'x' })).body.errors).toHaveProperty('content');
    expect((await h.call('POST', '/v1/keys', { body: {} })).body).toEqual({ errors: { key: ['missing field'] } });
    expect(
      (await h.call('POST', '/v1/keys', { raw: '{"key":', headers: { 'content-type': 'application/json' } })).status,
    ).toBe(400);
    expect((await add({ name: 'x', content: 'x'.repeat(20_000) })).status).toBe(422);
    expect((await h.call('GET', '/v1/keys')).body.keys).toEqual([]);
  });

  it('refuses a duplicate key (same fingerprint, whatever the comment) and a duplicate name', async () => {
    const first = await h.call('POST', '/v1/keys', { body: { key: { name: 'rsa', content: rsa.publicKey } } });
    expect(first.status).toBe(201);
    const sameKeyOtherComment = `${rsa.publicKey.split(' ').slice(0, 2).join(' ')} another-comment`;
    expect(
      (await h.call('POST', '/v1/keys', { body: { key: { name: 'rsa-2', content: sameKeyOtherComment } } })).body.errors
        .content[0],
    ).toMatch(/already registered/);
    expect(
      (await h.call('POST', '/v1/keys', { as: 'trial', body: { key: { name: 'mine', content: rsa.publicKey } } })).body
        .errors.content[0],
    ).toMatch(/another account/);
    expect(
      (await h.call('POST', '/v1/keys', { body: { key: { name: 'rsa', content: laptop.publicKey } } })).body,
    ).toEqual({ errors: { name: ['has already been taken'] } });
  });

  it("another user's key is 404 to show and to remove; no credentials is 401", async () => {
    const mine = (await h.call('GET', '/v1/keys')).body.keys[0];
    expect((await h.call('GET', `/v1/keys/${mine.id}`, { as: 'trial' })).body).toEqual({
      resource: 'key',
      error: 'not found',
    });
    expect((await h.call('DELETE', `/v1/keys/${mine.id}`, { as: 'trial' })).status).toBe(404);
    expect((await h.call('DELETE', '/v1/keys/nope')).status).toBe(404);
    expect((await h.call('GET', '/v1/keys', { as: null })).status).toBe(401);
    expect((await h.call('GET', `/v1/keys/${mine.id}`)).status).toBe(200);
  });

  it('go-scalingo keys.go as the CLI drives it: add {"key":{name,content}} → 201 {key}; list; remove by the id found by name → 204', async () => {
    const bearer = await h.bearer();
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json',
      'user-agent': 'Scalingo CLI v1.48.0',
    };
    const go = (method: string, path: string, body?: unknown) =>
      h.call(method, path, { as: { bearer }, headers, raw: body === undefined ? undefined : JSON.stringify(body) });
    // `scalingo keys-add go-key ~/.ssh/id_ed25519.pub` sends the file as read, newline included.
    const added = await go('POST', '/v1/keys', { key: { name: 'go-key', content: `${laptop.publicKey}\n` } });
    expect(added.status).toBe(201);
    expect(added.body.key).toMatchObject({ id: expect.any(String), name: 'go-key', content: laptop.publicKey });
    // `scalingo keys` prints content[0:20] + "..." + content[len-30:]: the content is long enough for it.
    const listed = (await go('GET', '/v1/keys')).body.keys as { id: string; name: string; content: string }[];
    expect(listed.every((k) => k.content.length >= 30)).toBe(true);
    // `scalingo keys-remove go-key`: KeysList, the first key with that name, KeysDelete(id) expecting 204.
    const id = listed.find((k) => k.name === 'go-key')!.id;
    const removed = await go('DELETE', `/v1/keys/${id}`);
    expect(removed.status).toBe(204);
    expect(removed.text).toBe('');
    expect((await go('GET', '/v1/keys')).body.keys.map((k: { name: string }) => k.name)).not.toContain('go-key');
  });

  it('keys of the config (users[].sshKeys) are listed for their user; invalid entries are skipped', async () => {
    const keys = (await h.call('GET', '/v1/keys', { as: 'other' })).body.keys;
    expect(keys).toEqual([
      expect.objectContaining({
        name: 'config-key-1',
        content: configured.publicKey,
        fingerprint: fingerprint(configured),
      }),
    ]);
  });
});
