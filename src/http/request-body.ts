import { type IncomingMessage } from 'node:http';
import { StringDecoder } from 'node:string_decoder';

/** What a body being read keeps between Node's events (on the request, so that the listeners are made once). */
interface Reading {
  decoder: StringDecoder;
  parts: string[];
  resolve: (text: string) => void;
  reject: (err: Error) => void;
}

const READING = Symbol('body being read');
const CLOSED_EARLY = 'request body not received in full: the connection closed';
type ReadRequest = IncomingMessage & { [READING]?: Reading };

/**
 * A Node request's body as text, from its `data` and `end` events. The body size limit applies before this runs
 * (bodyGuards checks Content-Length, which Node's parser holds the client to; a chunked body goes through hono's
 * reading with its limit instead). Decoded chunk by chunk into JS strings: a large body never becomes one native
 * buffer of its size plus a native copy as text (Buffer.concat, then toString): native memory freed that way stays
 * in the process (malloc keeps it), where the JS heap gives its pages back. Events, not `for await`: the async
 * iterator made a generator, a promise per chunk and stream-finished listeners for each request's one small chunk.
 * The listeners are module functions reading their state from the request, not closures made per request.
 */
export function readNodeBody(incoming: IncomingMessage): Promise<string> {
  // Gone before the read began (the client closed while an earlier step waited): no event will come any more.
  if (incoming.destroyed) return Promise.reject(new Error(CLOSED_EARLY));
  return new Promise((resolve, reject) => {
    (incoming as ReadRequest)[READING] = { decoder: new StringDecoder('utf8'), parts: [], resolve, reject };
    incoming.on('data', onData);
    incoming.once('end', onEnd);
    // Kept after the end: an error emitted later then has a listener (it settles nothing any more).
    incoming.on('error', onError);
    incoming.once('close', onClose);
  });
}

function onData(this: ReadRequest, chunk: Buffer): void {
  const reading = this[READING];
  if (reading) reading.parts.push(reading.decoder.write(chunk));
}

function onEnd(this: ReadRequest): void {
  const reading = this[READING];
  if (!reading) return;
  this[READING] = undefined;
  const { parts } = reading;
  parts.push(reading.decoder.end());
  reading.resolve(parts.length === 2 ? parts[0] + parts[1] : parts.join(''));
}

function onError(this: ReadRequest, err: Error): void {
  const reading = this[READING];
  if (!reading) return;
  this[READING] = undefined;
  reading.reject(err);
}

/** Closed before its end (the client went away mid-body): the read fails as the stream's own reading would. */
function onClose(this: ReadRequest): void {
  if (this[READING]) onError.call(this, new Error(CLOSED_EARLY));
}
