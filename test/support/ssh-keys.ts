import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface KeyPair {
  /** Path of the private key file (for `ssh -i`). */
  privateKey: string;
  /** The `.pub` line. */
  publicKey: string;
  dir: string;
}

/** A throw-away key pair made by the real `ssh-keygen`, in its own temp dir. */
export function keyPair(type: 'ed25519' | 'rsa' = 'ed25519', comment = 'test@emulator'): KeyPair {
  const dir = mkdtempSync(join(tmpdir(), 'emu-key-'));
  const privateKey = join(dir, `id_${type}`);
  execFileSync(
    'ssh-keygen',
    ['-q', '-t', type, ...(type === 'rsa' ? ['-b', '2048'] : []), '-N', '', '-C', comment, '-f', privateKey],
    { stdio: 'ignore' },
  );
  return { privateKey, publicKey: readFileSync(`${privateKey}.pub`, 'utf8').trim(), dir };
}

/** `ssh-keygen -lf` of a public key line: `SHA256:…`. */
export function fingerprint(pair: KeyPair): string {
  return execFileSync('ssh-keygen', ['-lf', `${pair.privateKey}.pub`], { encoding: 'utf8' }).split(' ')[1];
}
