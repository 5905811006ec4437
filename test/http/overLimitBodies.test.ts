// A body over the limit, sent by a real client to a real listening server: the 400 must always be readable. The
// service answers as soon as it knows the body is too large (at once from Content-Length, or once the limit is read
// from a chunked body) and closes the connection; closing while the client is still sending used to reset it, and the
// client could lose the answer it had not read yet (about 1 try in 6 with curl). Each try here sends headers and then
// the body in pieces while reading, as curl does, and must read the whole 400 with its message.
import assert from "node:assert/strict";
import { type AddressInfo, connect } from "node:net";
import { after, before, test } from "node:test";
import { Worker } from "node:worker_threads";
import { MANAGEMENT_PREFIX } from "../../src/app";
import { LINGER_MS } from "../../src/http/lingeringClose";
import { type Dapp, startTestApp, type TestApp } from "../helpers/app";

const LIMIT = 64 * 1024;
/** Well over the limit: 32 times it. */
const BODY_BYTES = 32 * LIMIT;
const TRIES = 50;

let t: TestApp;
let dapp: Dapp;
let port: number;
before(async () => {
  t = await startTestApp({ bodyLimitBytes: LIMIT });
  dapp = await t.dapp();
  await t.app.listen({ port: 0, host: "127.0.0.1" });
  port = (t.app.server.address() as AddressInfo).port;
});
after(() => t.close());

/**
 * The client, on a thread of its own so that it sends and reads at the same time as the server answers and closes,
 * as a client in another process does (in the server's own thread the race never showed). Each try: a connection,
 * the headers, then the body piece by piece as fast as the socket takes it, until the answer is read whole (headers
 * and as many body bytes as its Content-Length says) or the connection fails. It posts one outcome per try.
 */
const CLIENT = `
const { workerData, parentPort } = require("node:worker_threads");
const { connect } = require("node:net");
const { port, path, headers, chunked, bodyBytes, tries } = workerData;
const piece = Buffer.alloc(16 * 1024, "a");
const framed = chunked ? Buffer.concat([Buffer.from(piece.length.toString(16) + "\\r\\n"), piece, Buffer.from("\\r\\n")]) : piece;
const head = "POST " + path + " HTTP/1.1\\r\\nhost: localhost\\r\\ncontent-type: application/json\\r\\n" +
  Object.entries(headers).map(([name, value]) => name + ": " + value + "\\r\\n").join("") +
  (chunked ? "transfer-encoding: chunked\\r\\n" : "content-length: " + bodyBytes + "\\r\\n") + "\\r\\n";
function answerIn(received) {
  const headEnd = received.indexOf("\\r\\n\\r\\n");
  if (headEnd < 0) return undefined;
  const top = received.subarray(0, headEnd).toString();
  const length = Number((/content-length: (\\d+)/i.exec(top) || [])[1]);
  const body = received.subarray(headEnd + 4);
  if (!(body.length >= length)) return undefined;
  return { status: Number(top.split(" ")[1]), body: body.subarray(0, length).toString() };
}
function tryOnce() {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    let received = Buffer.alloc(0);
    let done = false;
    const finish = (outcome) => { if (done) return; done = true; socket.destroy(); resolve(outcome); };
    socket.on("data", (chunk) => {
      received = Buffer.concat([received, chunk]);
      const answer = answerIn(received);
      if (answer) finish({ answer });
    });
    socket.on("error", (error) => finish({ error: error.code + " " + error.message + " after " + received.length + " bytes of the answer" }));
    socket.on("close", () => finish({ error: "closed after " + received.length + " bytes of the answer" }));
    socket.write(head);
    let sent = 0;
    const sendMore = () => {
      while (!done && !socket.destroyed && sent < bodyBytes) {
        sent += piece.length;
        const end = chunked && sent >= bodyBytes ? Buffer.from("0\\r\\n\\r\\n") : Buffer.alloc(0);
        if (!socket.write(Buffer.concat([framed, end]))) return void socket.once("drain", sendMore);
      }
    };
    sendMore();
  });
}
(async () => {
  for (let n = 0; n < tries; n++) parentPort.postMessage(await tryOnce());
})();
`;

interface Outcome {
  /** The answer, read whole. */
  answer?: { status: number; body: string };
  /** What ended the connection before the answer was read whole. */
  error?: string;
}

/** `tries` tries by the client thread; their outcomes in order. */
function tries(target: { path: string; headers: Record<string, string> }, chunked: boolean): Promise<Outcome[]> {
  return new Promise((resolve, reject) => {
    const outcomes: Outcome[] = [];
    const client = new Worker(CLIENT, {
      eval: true,
      workerData: { port, ...target, chunked, bodyBytes: BODY_BYTES, tries: TRIES },
    });
    client.on("message", (outcome: Outcome) => {
      outcomes.push(outcome);
      if (outcomes.length === TRIES) void client.terminate().then(() => resolve(outcomes));
    });
    client.on("error", reject);
  });
}

const paths = () => ({
  management: {
    path: `${MANAGEMENT_PREFIX}/paymasterParameters`,
    headers: { authToken: dapp.token },
    message: `Request body is larger than the limit of ${LIMIT} bytes`,
  },
  rpc: {
    path: `/api/v1/${dapp.chainId}/${dapp.apiKey}`,
    headers: {},
    message: "Invalid request: the body is too large",
  },
});

for (const chunked of [false, true]) {
  for (const kind of ["management", "rpc"] as const) {
    const how = chunked ? "chunked, no Content-Length" : "with its Content-Length";
    test(`${kind}: a body ${BODY_BYTES} bytes long (${how}), ${TRIES} tries: each reads its 400`, async () => {
      const target = paths()[kind];
      const failures = (await tries(target, chunked)).flatMap((outcome, n) => {
        if (outcome.error) return [`try ${n}: ${outcome.error}`];
        if (outcome.answer?.status === 400 && outcome.answer.body.includes(target.message)) return [];
        return [`try ${n}: ${outcome.answer?.status} ${outcome.answer?.body}`];
      });
      assert.deepEqual(failures, [], `${failures.length} of ${TRIES} tries did not read their 400`);
    });
  }
}

test("a client that goes on sending after its 400 is cut off once the linger's bound is reached", async () => {
  const socket = connect(port, "127.0.0.1");
  const head =
    `POST ${MANAGEMENT_PREFIX}/paymasterParameters HTTP/1.1\r\nhost: localhost\r\nauthToken: ${dapp.token}\r\n` +
    "content-type: application/json\r\ncontent-length: 1073741824\r\n\r\n";
  const startedMs = Date.now();
  let received = "";
  const ended = new Promise<void>((resolve) => {
    socket.on("data", (chunk) => (received += chunk.toString()));
    socket.on("error", () => resolve());
    socket.on("close", () => resolve());
  });
  socket.write(head);
  const piece = Buffer.alloc(64 * 1024, "a");
  const sendMore = () => {
    while (!socket.destroyed && socket.write(piece)) {}
    if (!socket.destroyed) socket.once("drain", sendMore);
  };
  sendMore();
  await ended;
  assert.match(received, /^HTTP\/1\.1 400 /, "the answer came first");
  assert.ok(received.includes(`Request body is larger than the limit of ${LIMIT} bytes`));
  assert.ok(Date.now() - startedMs < LINGER_MS + 2000, `cut after ${Date.now() - startedMs} ms`);
});
