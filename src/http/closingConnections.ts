import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";

/**
 * How long a connection that was idle when the stop began stays open. Its last answer promised keep-alive, so its
 * client may be about to send on it: within this time the request gets the 503 (which closes the connection) instead
 * of a reset. Short, because the stop waits for it; a client pausing longer than this between requests meets the race
 * every HTTP/1.1 server has with an idle connection it closes.
 */
const IDLE_GRACE_MS = 250;
/** How often idle connections are looked for once the grace is over. */
const SWEEP_MS = 50;

/**
 * Closes a stopping server's connections without resetting a client that is using them. Once the stop has begun, the
 * last answer a connection owes says `Connection: close`, the answers to requests already in flight included: the
 * client then opens a new connection for its next request rather than sending on one the server closes as soon as it
 * is idle (which reset it). An earlier answer with a request pipelined behind it keeps the connection open for that
 * one's answer, which then closes it. Idle connections are closed only after IDLE_GRACE_MS, whoever asks (Node's
 * `server.close()` does at once, main.ts every 50 ms), and from then on as they go idle.
 */
export function closeConnectionsGently(server: Server): { begin(): void } {
  // Each connection's answers not yet finished, in the order they are owed.
  const owed = new Map<Socket, Set<ServerResponse>>();
  let graceEndsMs: number | undefined;
  const closeAfter = (answers: Set<ServerResponse>) => {
    const last = [...answers].at(-1);
    for (const answer of answers) {
      if (answer.headersSent) continue;
      if (answer === last) answer.setHeader("connection", "close");
      else answer.removeHeader("connection");
    }
  };
  // First among the listeners, so that the header is set before any handler can answer.
  server.prependListener("request", (request: IncomingMessage, response: ServerResponse) => {
    const { socket } = request;
    const answers = owed.get(socket) ?? new Set();
    owed.set(socket, answers);
    answers.add(response);
    response.once("close", () => {
      answers.delete(response);
      if (answers.size === 0) owed.delete(socket);
    });
    if (graceEndsMs !== undefined) closeAfter(answers);
  });
  const closeIdle = server.closeIdleConnections.bind(server);
  // The grace is real time, measured beside the sweep's timer, and not the context's clock: a test that moves the
  // service's clock must not close, or keep open, a connection a client is about to use.
  server.closeIdleConnections = () => {
    if (graceEndsMs === undefined || Date.now() >= graceEndsMs) closeIdle();
  };
  return {
    begin() {
      if (graceEndsMs !== undefined) return;
      graceEndsMs = Date.now() + IDLE_GRACE_MS;
      for (const answers of owed.values()) closeAfter(answers);
      const sweep = setInterval(() => server.closeIdleConnections(), SWEEP_MS);
      sweep.unref();
      server.once("close", () => clearInterval(sweep));
      if (!server.listening) clearInterval(sweep);
    },
  };
}
