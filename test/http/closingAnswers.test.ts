import assert from "node:assert/strict";
import { once } from "node:events";
import { type AddressInfo, connect, type Socket } from "node:net";
import { test } from "node:test";
import { MANAGEMENT_PREFIX } from "../../src/app";
import { startTestApp, type TestApp } from "../helpers/app";
import { eventually } from "../helpers/eventually";

// While the app closes, a request that arrives on a kept-alive connection (one that still had a request in flight, so
// the close could not drop it as idle) is answered in its path's envelope, not with Fastify's own 503 body.

interface RawReply {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/** The replies read off one connection until the server ends it, in order (each has a Content-Length). */
function readReplies(socket: Socket): Promise<RawReply[]> {
  return new Promise((resolve, reject) => {
    let data = Buffer.alloc(0);
    socket.on("data", (chunk) => (data = Buffer.concat([data, chunk])));
    socket.on("error", reject);
    socket.on("close", () => {
      const replies: RawReply[] = [];
      let rest = data;
      while (rest.length > 0) {
        const headEnd = rest.indexOf("\r\n\r\n");
        const [statusLine, ...lines] = rest.subarray(0, headEnd).toString().split("\r\n");
        const headers = Object.fromEntries(
          lines.map((line) => [
            line.slice(0, line.indexOf(":")).toLowerCase(),
            line.slice(line.indexOf(":") + 1).trim(),
          ]),
        );
        const length = Number(headers["content-length"]);
        const body = rest.subarray(headEnd + 4, headEnd + 4 + length).toString();
        replies.push({ status: Number(statusLine?.split(" ")[1]), headers, body: JSON.parse(body) });
        rest = rest.subarray(headEnd + 4 + length);
      }
      resolve(replies);
    });
  });
}

const request = (method: string, path: string, headers: Record<string, string>, body = "") =>
  `${method} ${path} HTTP/1.1\r\nhost: localhost\r\nconnection: keep-alive\r\n` +
  Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join("") +
  (body === "" ? "" : `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n`) +
  `\r\n${body}`;

/**
 * Sends `first` with the last byte of its body held back, starts the app's close, then sends that byte and `second` on
 * the same connection: `first` is in flight when the close begins, `second` arrives during it.
 */
async function sendAcrossClose(t: TestApp, first: string, second: string) {
  await t.app.listen({ port: 0, host: "127.0.0.1" });
  const socket = connect((t.app.server.address() as AddressInfo).port, "127.0.0.1");
  await new Promise((resolve) => socket.once("connect", resolve));
  const replies = readReplies(socket);
  // The server emits "request" once it has the headers; the app's first onRequest hook (answerWhileClosing's) has
  // then run, synchronously in that event, and found the app open.
  const arrived = once(t.app.server, "request");
  socket.write(first.slice(0, -1));
  await arrived;
  const closed = t.close();
  // The server stops listening once the close's preClose hooks have run: from then on the app is closing.
  await eventually(
    "the close begun",
    () => t.app.server.listening,
    (listening) => !listening,
    { everyMs: 1 },
  );
  socket.write(first.slice(-1) + second);
  const answered = await replies;
  await closed;
  return answered;
}

test("an RPC request that arrives during the close gets a JSON-RPC error with its id, Connection: close and Retry-After", async () => {
  const t = await startTestApp();
  const dapp = await t.dapp();
  const rpcPath = `/api/v1/${dapp.chainId}/${dapp.apiKey}`;
  const call = (id: number) => JSON.stringify({ jsonrpc: "2.0", id, method: "pm_noSuchMethod", params: [] });
  const [first, second, ...more] = await sendAcrossClose(
    t,
    request("POST", rpcPath, {}, call(1)),
    request("POST", rpcPath, {}, call(7)),
  );
  // The request in flight is answered by its method as usual.
  assert.deepEqual(first?.body, {
    jsonrpc: "2.0",
    id: 1,
    error: { code: -32601, message: "Method not found: pm_noSuchMethod" },
  });
  assert.equal(second?.status, 503);
  assert.deepEqual(second?.body, {
    jsonrpc: "2.0",
    id: 7,
    error: { code: -32002, message: "Service unavailable: this instance is shutting down; retry on a new connection" },
  });
  assert.equal(second?.headers.connection, "close");
  assert.equal(second?.headers["retry-after"], "1");
  // A browser wallet reads it only with the endpoint's CORS headers.
  assert.equal(second?.headers["access-control-allow-origin"], "*");
  assert.equal(more.length, 0);
});

test("a management request that arrives during the close gets 503 in the management API's envelope", async () => {
  const t = await startTestApp();
  const { token } = await t.account();
  const list = `${MANAGEMENT_PREFIX}/paymasterParameters`;
  const create = JSON.stringify({ name: "during-close", type: "HYBRID", chainId: 31337, version: "1.0.0" });
  const [first, second] = await sendAcrossClose(
    t,
    request("POST", list, { authToken: token }, create),
    request("GET", list, { authToken: token }),
  );
  assert.equal(first?.status, 200);
  assert.equal(second?.status, 503);
  assert.deepEqual(second?.body, {
    statusCode: 503,
    message: "Service unavailable: this instance is shutting down; retry on a new connection",
  });
  assert.equal(second?.headers.connection, "close");
  assert.equal(second?.headers["retry-after"], "1");
});
