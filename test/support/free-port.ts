import { createServer } from 'node:net';

/** A port free on the machine's loopback now (for a server the test starts that cannot take port 0 itself). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/** The emulator's three port flags at 0 (any free port): a user's `npm start` may hold the defaults. */
export const FREE_PORT_FLAGS = ['--port', '0', '--router-port', '0', '--ssh-port', '0'] as const;
