import type { IncomingMessage, Server } from "node:http";
import type { Socket } from "node:net";

/** How long a connection closed after an early answer goes on reading the body its client is still sending. */
export const LINGER_MS = 2000;
/** How much of that body it reads, at most, before closing anyway. */
const LINGER_BYTES = 16 * 1024 * 1024;

/**
 * An answer given before the request's body is all in (a body over the limit, a 503 during a stop) closes the
 * connection. Node closes it as soon as the answer is written: the client, still sending, then gets a reset, and a
 * client that had not read the answer yet loses it (about 1 try in 6 with curl for a body over the limit). Instead the
 * service sends its FIN after the answer, so the client can read all of it and knows nothing more comes, and reads and
 * drops what the client goes on sending: the connection is closed once the body ends, the client closes its side,
 * LINGER_BYTES more were read or LINGER_MS passed, whichever comes first.
 */
export function lingerOnEarlyClose(server: Server): void {
  const requests = new WeakMap<Socket, IncomingMessage>();
  server.on("request", (request: IncomingMessage) => requests.set(request.socket, request));
  server.on("connection", (socket: Socket) => {
    // Node's server calls destroySoon once the last answer of a connection that closes is written.
    const destroySoon = socket.destroySoon.bind(socket);
    socket.destroySoon = () => {
      const request = requests.get(socket);
      if (!request || request.complete) destroySoon();
      else linger(socket, request);
    };
  });
}

function linger(socket: Socket, request: IncomingMessage): void {
  socket.end();
  let read = 0;
  const close = () => socket.destroy();
  const deadline = setTimeout(close, LINGER_MS);
  deadline.unref();
  socket.once("close", () => clearTimeout(deadline));
  socket.once("end", close);
  request.once("end", close);
  request.on("data", (chunk: Buffer) => {
    read += chunk.length;
    if (read > LINGER_BYTES) close();
  });
  request.resume();
}
