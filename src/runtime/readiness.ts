// The Docker runtime's readiness probe (ContainerRuntime.ready): another runtime may answer from
// its own notion of readiness (a Kubernetes pod's Ready condition).
import { request } from 'node:http';
import { type Address } from './reach.ts';

/**
 * Docker's userland proxy accepts TCP on a published port before the app listens, so readiness is
 * an HTTP answer (any status) from the app through that port, at the address it is published on.
 */
export function answersHttp(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(
      {
        host,
        port,
        path: '/',
        method: 'GET',
        agent: false,
        timeout: 1000,
        headers: { 'user-agent': 'scalingo-emulator-boot-check' },
      },
      (res) => {
        res.resume();
        resolve(true);
      },
    );
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
    req.end();
  });
}

/** ContainerRuntime.ready of the Docker and swarm runtimes: an HTTP answer at the container's address (reach.ts). */
export async function readyAtAddress({ address }: { address: Address | null }): Promise<boolean> {
  return address !== null && answersHttp(address.host, address.port);
}
