// Checks a custom domain's TLS certificate and key the way the platform reports them: the subject and
// validity of the leaf certificate, the key's type and size. The router itself only speaks HTTP, so the
// certificate is stored and described, never served (docs/fidelity.md, "Domains").
import { createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto';
import { ApiError } from '../../http/errors.ts';

export interface CertificateInfo {
  /** One-line subject, OpenSSL style: `/CN=shop.example.com`. */
  subject: string;
  /** The leaf certificate's notAfter (ms). */
  expiresAt: number;
  /** What the platform answers in `tlskey`: the key's type and length, e.g. `RSA 2048`. */
  keyDescription: string;
}

// Bounded input (the schema caps the size), fixed delimiters: no backtracking risk.
const PEM_CERT = /-----BEGIN CERTIFICATE-----[A-Za-z0-9+/=\s]+-----END CERTIFICATE-----/g;

/** Parses and checks a PEM chain and key for `hostname`; 422 on tlscert/tlskey with the reason. */
export function checkCertificate(certPem: string, keyPem: string, hostname: string, now: number): CertificateInfo {
  const blocks = certPem.match(PEM_CERT) ?? [];
  const first = blocks[0];
  if (first === undefined) throw ApiError.invalid('tlscert', 'is not a PEM certificate (-----BEGIN CERTIFICATE-----)');
  let leaf: X509Certificate;
  try {
    leaf = new X509Certificate(first);
    for (const b of blocks.slice(1)) new X509Certificate(b);
  } catch {
    throw ApiError.invalid('tlscert', 'is not a valid PEM certificate');
  }
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: keyPem, format: 'pem' });
  } catch {
    throw ApiError.invalid('tlskey', 'is not a valid PEM private key');
  }
  if (!leaf.checkPrivateKey(key)) throw ApiError.invalid('tlskey', 'does not match the certificate');
  const expiresAt = Date.parse(leaf.validTo);
  if (Number.isFinite(expiresAt) && expiresAt <= now)
    throw ApiError.invalid('tlscert', `has expired (not valid after ${new Date(expiresAt).toISOString()})`);
  const notBefore = Date.parse(leaf.validFrom);
  if (Number.isFinite(notBefore) && notBefore > now)
    throw ApiError.invalid('tlscert', `is not valid yet (not valid before ${new Date(notBefore).toISOString()})`);
  if (!leaf.checkHost(hostname))
    throw ApiError.invalid(
      'tlscert',
      `is not valid for ${hostname} (subject ${oneLine(leaf.subject)}${leaf.subjectAltName ? `, ${leaf.subjectAltName}` : ''})`,
    );
  return { subject: oneLine(leaf.subject), expiresAt, keyDescription: describeKey(key) };
}

function oneLine(subject: string): string {
  return subject
    .split('\n')
    .filter(Boolean)
    .map((p) => `/${p}`)
    .join('');
}

function describeKey(key: KeyObject): string {
  const d = key.asymmetricKeyDetails ?? {};
  const type = (key.asymmetricKeyType ?? 'unknown').toUpperCase();
  if (d.modulusLength) return `${type} ${d.modulusLength}`;
  if (d.namedCurve) return `${type} ${d.namedCurve}`;
  return type;
}
