// Request bodies read straight from Node's IncomingMessage, within the size limit. Hono on Node
// builds a web Request for a body (a ReadableStream over the socket, read chunk by chunk through
// promises) the first time anything touches it, hono's bodyLimit included; a score request's body
// is read whole anyway, and on a replica's main thread that wrapping cost as much as validating it
// (docs/scale-out.md, "Where the coordinator's main thread goes"). The text goes into the request's
// body cache, from which c.req.json() and the validators read it as they would have.
import type { IncomingMessage } from 'node:http';
import type { Context, MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { HTTPException } from 'hono/http-exception';

/** A UTF-8 decoder as the web Request's text() uses one: a leading byte order mark dropped, bad bytes replaced. */
const DECODER = new TextDecoder();

/** Reads the body of a request with one (not GET or HEAD), answering `onError` when it is over `maxSize` bytes. */
export function readBody(maxSize: number, onError: (c: Context) => Response | Promise<Response>): MiddlewareHandler {
  // Without Node's request (app.request in tests, other runtimes): hono's own limit, through the web Request.
  const fallback = bodyLimit({ maxSize, onError });
  return async (c, next) => {
    const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
    if (!incoming) return fallback(c, next);
    if (c.req.method === 'GET' || c.req.method === 'HEAD') return next();
    const declared = incoming.headers['content-length'];
    if (declared !== undefined && !incoming.headers['transfer-encoding'] && Number(declared) > maxSize)
      return onError(c);
    const text = await readText(incoming, maxSize).catch((e: Error) => {
      throw new HTTPException(400, { message: `the request body could not be read: ${e.message}` });
    });
    if (text === null) return onError(c);
    // hono keeps each body form as a promise here (#cachedBody in hono/dist/request.js), whatever its declared type.
    (c.req.bodyCache as Record<string, unknown>).text = Promise.resolve(text);
    return next();
  };
}

/** The body as text, or null once it passes `maxSize` bytes (the rest is left unread: the server drains it after the answer). */
function readText(incoming: IncomingMessage, maxSize: number): Promise<string | null> {
  if (incoming.readableEnded) return Promise.resolve('');
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = () => {
      incoming.off('data', onData).off('end', onEnd).off('error', onError);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxSize) {
        done();
        resolve(null);
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      done();
      resolve(DECODER.decode(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size)));
    };
    const onError = (e: Error) => {
      done();
      reject(e);
    };
    incoming.on('data', onData).on('end', onEnd).on('error', onError);
  });
}
