import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A 32-byte signing key kept in the data directory as `<name>` (mode 600): what it signs survives a
 * restart, not a new data directory. In memory (no data dir): a new key per process.
 */
export function loadSecretKey(dataDir: string | null, name: string): Buffer {
  if (!dataDir) return randomBytes(32);
  const file = join(dataDir, name);
  if (existsSync(file)) return Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
  const key = randomBytes(32);
  writeFileSync(file, key.toString('base64'), { mode: 0o600 });
  return key;
}
