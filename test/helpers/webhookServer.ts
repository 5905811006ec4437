import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One request the webhook server received, as it arrived. */
export interface ReceivedCall {
  method: string;
  /** Path and query, exactly as sent. */
  target: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

const json = (status: number, value: unknown): Handler => {
  return (_request, response) => {
    response.writeHead(status, { "content-type": "application/json" });
    response.end(JSON.stringify(value));
  };
};

/**
 * The behaviours a webhook can have, by path. `/slow` never answers; `/redirect` sends to `/true` (which must then not
 * be called); `/oversized` announces its length, `/oversized-stream` does not.
 */
function behaviours(base: () => string): Record<string, Handler> {
  return {
    "/true": json(200, { arePoliciesVerified: true }),
    "/false": json(200, { arePoliciesVerified: false }),
    "/old-spelling": json(200, { arePoliciesVerifed: true }),
    "/old-spelling-false": json(200, { arePoliciesVerifed: false }),
    "/string-true": json(200, { arePoliciesVerified: "true" }),
    "/missing": json(200, { verified: true }),
    "/array": json(200, [true]),
    "/status-500": json(500, { arePoliciesVerified: true }),
    "/status-404": json(404, { arePoliciesVerified: true }),
    "/invalid-json": (_request, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.end("{arePoliciesVerified: true");
    },
    "/slow": () => {
      // Never answers: the caller's timeout must end the call.
    },
    "/slow-body": (_request, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.write('{"arePoliciesVerified":');
      // The rest never comes.
    },
    "/redirect": (_request, response) => {
      response.writeHead(302, { location: `${base()}/true` });
      response.end();
    },
    "/redirect-307": (_request, response) => {
      response.writeHead(307, { location: `${base()}/true` });
      response.end();
    },
    "/oversized": json(200, { arePoliciesVerified: true, padding: "x".repeat(20_000) }),
    "/oversized-stream": (_request, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.write('{"arePoliciesVerified":true,"padding":"');
      for (let i = 0; i < 40; i++) response.write("y".repeat(1024));
      response.end('"}');
    },
    "/hang-up": (request) => {
      request.socket.destroy();
    },
  };
}

export interface WebhookServer {
  /** `http://127.0.0.1:<port>` */
  base: string;
  port: number;
  url(path: string): string;
  calls: ReceivedCall[];
  /** Calls whose path (without the query) is `path`. */
  callsTo(path: string): ReceivedCall[];
  /** Replaces or adds the behaviour of a path. */
  on(path: string, handler: Handler): void;
  close(): Promise<void>;
}

/** A real HTTP webhook server on 127.0.0.1 with a free port, recording every request it receives. */
export async function startWebhookServer(): Promise<WebhookServer> {
  const calls: ReceivedCall[] = [];
  let base = "";
  const handlers = behaviours(() => base);
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const target = request.url ?? "/";
      const path = target.split("?")[0] as string;
      calls.push({
        method: request.method ?? "",
        target,
        path,
        headers: request.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      });
      const handler = handlers[path] ?? json(404, { error: "no such behaviour" });
      handler(request, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
  return {
    base,
    port,
    url: (path) => `${base}${path}`,
    calls,
    callsTo: (path) => calls.filter((call) => call.path === path),
    on(path, handler) {
      handlers[path] = handler;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
