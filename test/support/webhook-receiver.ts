import { createServer, type Server } from 'node:http';
import { type AddressInfo } from 'node:net';

/** A webhook endpoint on 127.0.0.1:0 that records every JSON body; the first `failFirst` answers are 500. */
export interface Receiver {
  url: string;
  bodies: any[];
  /** Requests received, failed ones included. */
  hits: number;
  failFirst: number;
  close(): Promise<void>;
}

export async function startReceiver(failFirst = 0): Promise<Receiver> {
  const r = { url: '', bodies: [] as any[], hits: 0, failFirst } as Receiver;
  const server: Server = createServer((req, res) => {
    let data = '';
    req.on('data', (c) => (data += c));
    req.on('end', () => {
      r.hits++;
      if (r.hits <= r.failFirst) return void res.writeHead(500).end('try again');
      r.bodies.push(JSON.parse(data));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  r.close = () => new Promise((ok) => server.close(() => ok()));
  return r;
}
