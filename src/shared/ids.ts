import { createHash, randomBytes, randomUUID } from 'node:crypto';

// Identifier shapes follow what the real platform returns (see docs/fidelity.md):
// apps, events and operations carry 24-hex ids (Mongo ObjectId-like), users `us-<uuid>`,
// alerts `al-<uuid>`, API token secrets `tk-us-<random>`.
// ObjectId layout: 4-byte seconds, 5 random bytes drawn once per process, 3-byte counter.
let counter = randomBytes(3).readUIntBE(0, 3);
const PROCESS_RANDOM = randomBytes(5).toString('hex');

export function objectId(now = Date.now()): string {
  const ts = Math.floor(now / 1000)
    .toString(16)
    .padStart(8, '0');
  counter = (counter + 1) % 0xffffff;
  return ts + PROCESS_RANDOM + counter.toString(16).padStart(6, '0');
}

export function prefixedUuid(prefix: string): string {
  return `${prefix}-${randomUUID()}`;
}

export function uuid(): string {
  return randomUUID();
}

/** An unguessable secret, URL-safe. */
export function secret(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/** Hash for high-entropy secrets (API tokens): a fast digest is enough, nothing to brute-force. */
export function sha256(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}
