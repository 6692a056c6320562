import { createServer, type IncomingMessage, request, type Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { readNodeBody } from '../../src/http/request-body.ts';

// The Node request's body read from its events (src/http/request-body.ts), over a real loopback connection.

let server: Server | undefined;
afterEach(() => {
  server?.close();
  server = undefined;
});

/** A server that reads each request's body and hands over the outcome (text or error) to `seen`. */
async function reading(): Promise<{ port: number; next: () => Promise<string | Error> }> {
  const outcomes: ((o: string | Error) => void)[] = [];
  const queued: (string | Error)[] = [];
  const settle = (o: string | Error) => {
    const waiting = outcomes.shift();
    if (waiting) waiting(o);
    else queued.push(o);
  };
  server = createServer((req: IncomingMessage, res) => {
    readNodeBody(req).then(
      (text) => {
        settle(text);
        res.end('ok');
      },
      (err: Error) => settle(err),
    );
  });
  server.on('clientError', (_err, socket) => socket.destroy());
  await new Promise<void>((r) => server?.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    next: () => {
      const q = queued.shift();
      return q !== undefined ? Promise.resolve(q) : new Promise((r) => outcomes.push(r));
    },
  };
}

describe('readNodeBody', () => {
  it('joins a body sent in several chunks, a character split across two of them', async () => {
    const { port, next } = await reading();
    const body = Buffer.from('{"app":{"name":"café-ü"}}', 'utf8');
    const split = body.indexOf(0xc3) + 1; // inside the two bytes of é
    const req = request({ port, host: '127.0.0.1', method: 'POST', headers: { 'content-length': body.length } });
    req.on('error', () => undefined);
    req.write(body.subarray(0, split));
    await new Promise((r) => setTimeout(r, 20));
    req.end(body.subarray(split));
    expect(await next()).toBe('{"app":{"name":"café-ü"}}');
  });

  it('reads an empty body as empty text', async () => {
    const { port, next } = await reading();
    const req = request({ port, host: '127.0.0.1', method: 'POST', headers: { 'content-length': 0 } });
    req.on('error', () => undefined);
    req.end();
    expect(await next()).toBe('');
  });

  it('fails at once when the client went away before the read began (no event would come any more)', async () => {
    let onRequest: (req: IncomingMessage) => void = () => undefined;
    const arrived = new Promise<IncomingMessage>((resolve) => {
      onRequest = resolve;
    });
    const listening = createServer((req) => onRequest(req));
    server = listening;
    await new Promise<void>((r) => listening.listen(0, '127.0.0.1', () => r()));
    const socket = connect((listening.address() as AddressInfo).port, '127.0.0.1');
    socket.on('error', () => undefined);
    socket.write('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"app":');
    const req = await arrived;
    req.on('error', () => undefined);
    const closed = new Promise((r) => req.once('close', r));
    socket.destroy();
    await closed;
    expect(req.destroyed).toBe(true);
    // Settled before the event loop turns once more: a read waiting for events would still be pending then.
    const outcome = await Promise.race([
      readNodeBody(req).then(
        () => 'read',
        (err: Error) => err.message,
      ),
      new Promise<string>((r) => setImmediate(() => r('still pending'))),
    ]);
    expect(outcome).toBe('request body not received in full: the connection closed');
  });

  it('fails, and leaves the server up, when the client goes away before the end of its body', async () => {
    const { port, next } = await reading();
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => undefined);
    socket.write('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"app":');
    await new Promise((r) => setTimeout(r, 20));
    socket.destroy();
    const outcome = await next();
    expect(outcome).toBeInstanceOf(Error);
    // The server still answers.
    const again = request({ port, host: '127.0.0.1', method: 'POST', headers: { 'content-length': 2 } });
    again.end('{}');
    expect(await next()).toBe('{}');
  });
});
