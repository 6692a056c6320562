// Ports the swarm runtime chooses itself, below the kernel's ephemeral range. Docker allocates the host ports
// of plain containers from that range (32768–60999 by default), and so does the kernel for every listener on port
// 0: a service's host-mode port (bound on every address of its node) or a door (swarm-forward.ts) taken from it
// could be the port Docker is about to give another container, whose start would then fail ("address already in
// use"). So services publish on ports of [low − 10000, low − 5001] and doors listen on [low − 5000, low − 1], where
// low is the ephemeral range's first port.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 11_024 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

const LOW = ephemeralLow();
export const SERVICE_PORTS = { first: LOW - 10_000, last: LOW - 5_001 } as const;
export const DOOR_PORTS = { first: LOW - 5_000, last: LOW - 1 } as const;

/** Whether nothing listens on `port` on `host` now (a listener is opened and closed at once). */
export function portFree(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen({ port, host, exclusive: true }, () => s.close(() => resolve(true)));
  });
}

/** A port of `range` not in `used` and free on `host`, tried from a random point; throws when the range is full. */
export async function pickPort(
  range: { first: number; last: number },
  used: Set<number>,
  host: string,
): Promise<number> {
  const size = range.last - range.first + 1;
  const start = Math.floor(Math.random() * size);
  for (let i = 0; i < size; i++) {
    const port = range.first + ((start + i) % size);
    if (!used.has(port) && (await portFree(port, host))) return port;
  }
  throw new Error(`no free port left in ${range.first}–${range.last}`);
}
