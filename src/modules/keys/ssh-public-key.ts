import { createHash } from 'node:crypto';

type Ssh2 = typeof import('ssh2');
let loading: Promise<Ssh2> | undefined;

/**
 * ssh2 takes ~75 ms to load: it is loaded when a key is first parsed or the SSH endpoint first
 * serves, never on the start path (the API answers before it is needed).
 */
export function loadSsh2(): Promise<Ssh2> {
  return (loading ??= import('ssh2').then((m) => ((m as { default?: Ssh2 }).default ?? m) as Ssh2));
}

export interface PublicKey {
  type: string;
  /** The key as one OpenSSH line: `<type> <base64 blob>[ <comment>]`. */
  content: string;
  /** `SHA256:<base64>`, as `ssh-keygen -l` prints it. */
  fingerprint: string;
}

/** Why a text is not an acceptable public key, worded for the `content` field of a 422. */
export class KeyError extends Error {}

/** The fingerprint of a public key blob (the SSH wire encoding), as OpenSSH prints it. */
export function fingerprintOf(blob: Buffer): string {
  return `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
}

/**
 * Parses one SSH public key (OpenSSH `.pub` line or RFC 4716 block) with ssh2's key parser and
 * gives it back in the OpenSSH form. Private keys, several keys at once and anything else are refused.
 */
export async function parsePublicKey(text: string): Promise<PublicKey> {
  const input = text.trim();
  if (!input) throw new KeyError("can't be blank");
  // Checked before parsing: an encrypted private key does not parse without its passphrase.
  if (/PRIVATE KEY-----|PuTTY-User-Key-File/.test(input))
    throw new KeyError('is a private key: add the public key (the .pub file), never the private one');
  const lines = input.split(/\r?\n/).filter((l) => l.trim());
  if (lines.length > 1 && !input.startsWith('---- BEGIN SSH2 PUBLIC KEY ----'))
    throw new KeyError('holds several lines: add one public key at a time');
  const { utils } = await loadSsh2();
  let parsed = utils.parseKey(input);
  if (Array.isArray(parsed)) parsed = parsed[0];
  if (!parsed || parsed instanceof Error)
    throw new KeyError(
      'is not a valid SSH public key (expected the content of a .pub file, e.g. "ssh-ed25519 AAAA… you@laptop")',
    );
  if (parsed.isPrivateKey())
    throw new KeyError('is a private key: add the public key (the .pub file), never the private one');
  const blob = parsed.getPublicSSH();
  const comment = (parsed.comment ?? '').replace(/\s+/g, ' ').trim();
  return {
    type: parsed.type,
    content: `${parsed.type} ${blob.toString('base64')}${comment ? ` ${comment}` : ''}`,
    fingerprint: fingerprintOf(blob),
  };
}
