// A TLS TCP endpoint of the machine's one Docker engine, for tests of a remote engine: certificates
// made with openssl (a CA, the engine's server pair for IP 127.0.0.1, client pairs), and a
// TLS-terminating proxy on 127.0.0.1 that requires a client certificate signed by the CA — what
// `dockerd --tlsverify --tlscacert ca.pem --tlscert … --tlskey … -H tcp://127.0.0.1:2376` does —
// piping each connection to the local socket (a second dockerd is not started on a shared machine).
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type TLSSocket } from 'node:tls';

function openssl(cwd: string, ...args: string[]): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** A CA in `dir`/<name>-ca.pem (+ key). */
function makeCa(dir: string, name: string): void {
  openssl(
    dir,
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    `${name}-ca-key.pem`,
    '-out',
    `${name}-ca.pem`,
    '-days',
    '2',
    '-subj',
    `/CN=${name} test CA`,
  );
}

/** A key and a certificate signed by CA `ca`, for a server (SAN IP:127.0.0.1) or a client. */
function makeLeaf(dir: string, ca: string, name: string, usage: 'serverAuth' | 'clientAuth'): void {
  openssl(
    dir,
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    `${name}-key.pem`,
    '-out',
    `${name}.csr`,
    '-subj',
    `/CN=${name}`,
  );
  const ext =
    usage === 'serverAuth'
      ? 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n'
      : 'extendedKeyUsage=clientAuth\n';
  writeFileSync(join(dir, `${name}.ext`), ext);
  openssl(
    dir,
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    `${ca}-ca.pem`,
    '-CAkey',
    `${ca}-ca-key.pem`,
    '-set_serial',
    `0x${randomBytes(8).toString('hex')}`,
    '-out',
    `${name}-cert.pem`,
    '-days',
    '2',
    '-extfile',
    `${name}.ext`,
  );
}

/** A DOCKER_CERT_PATH-style directory: ca.pem (to verify the engine), cert.pem and key.pem (the client). */
function clientDir(dir: string, sub: string, ca: string, client: string): string {
  const out = join(dir, sub);
  mkdirSync(out);
  writeFileSync(join(out, 'ca.pem'), readFileSync(join(dir, `${ca}-ca.pem`)));
  writeFileSync(join(out, 'cert.pem'), readFileSync(join(dir, `${client}-cert.pem`)));
  writeFileSync(join(out, 'key.pem'), readFileSync(join(dir, `${client}-key.pem`)));
  return out;
}

export interface TlsEngine {
  /** tcp://127.0.0.1:<port> */
  host: string;
  /** Trusts the engine's CA, shows a client certificate it accepts. */
  goodCerts: string;
  /** Trusts the engine's CA, shows a certificate of another CA (refused by the engine). */
  rogueClientCerts: string;
  /** Shows a good client certificate but trusts another CA (the engine is not who it should be). */
  wrongCaCerts: string;
  /** Common names of the client certificates of the connections the engine accepted. */
  accepted: string[];
  /** Handshakes the engine refused, with openssl's reason. */
  refused: string[];
  close(): Promise<void>;
}

export async function startTlsEngine(socketPath: string): Promise<TlsEngine> {
  const dir = mkdtempSync(join(tmpdir(), 'emu-tls-engine-'));
  makeCa(dir, 'engine');
  makeCa(dir, 'rogue');
  makeLeaf(dir, 'engine', 'engine-server', 'serverAuth');
  makeLeaf(dir, 'engine', 'emulator-client', 'clientAuth');
  makeLeaf(dir, 'rogue', 'rogue-client', 'clientAuth');
  const accepted: string[] = [];
  const refused: string[] = [];
  const open = new Set<Socket>();
  const server = createServer(
    {
      key: readFileSync(join(dir, 'engine-server-key.pem')),
      cert: readFileSync(join(dir, 'engine-server-cert.pem')),
      ca: readFileSync(join(dir, 'engine-ca.pem')),
      requestCert: true,
      rejectUnauthorized: true,
    },
    (tls: TLSSocket) => {
      accepted.push(String(tls.getPeerCertificate().subject?.CN));
      const engine = connect(socketPath);
      for (const s of [tls, engine]) {
        open.add(s);
        s.on('error', () => undefined);
        s.on('close', () => {
          open.delete(s);
          tls.destroy();
          engine.destroy();
        });
      }
      tls.pipe(engine).pipe(tls);
    },
  );
  server.on('tlsClientError', (err) => refused.push(`${(err as NodeJS.ErrnoException).code ?? ''} ${err.message}`));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    host: `tcp://127.0.0.1:${port}`,
    goodCerts: clientDir(dir, 'good', 'engine', 'emulator-client'),
    rogueClientCerts: clientDir(dir, 'rogue-client', 'engine', 'rogue-client'),
    wrongCaCerts: clientDir(dir, 'wrong-ca', 'rogue', 'emulator-client'),
    accepted,
    refused,
    async close() {
      for (const s of open) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
