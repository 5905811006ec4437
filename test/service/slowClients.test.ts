import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { DEFAULT_HTTP_LIMITS } from "../../src/config";
import { startTestApp } from "../helpers/app";
import { embeddedEnv, type RunningService, startService } from "../helpers/service";

/**
 * Slow and numerous clients against the real service, over real sockets: with short limits set through the
 * environment, a client that sends nothing, drips header bytes or drips its body is disconnected soon after its
 * timeout, connections beyond the cap are closed at once, and other clients are answered all along.
 */
const HEADERS_TIMEOUT_MS = 1500;
const REQUEST_TIMEOUT_MS = 3000;
const MAX_CONNECTIONS = 150;
/** Node checks request timeouts every second, and the machine is shared: a socket must be gone this soon after. */
const SLACK_MS = 4000;
/**
 * The headers deadline is our own timer from the connection, not Node's check: a client dripping a byte just under
 * the timeout is gone within this after it (Node's own check let it stay about the drip interval longer again).
 */
const HEADERS_SLACK_MS = 1300;
const HEADER_DRIP_MS = 1400;

const dataDir = mkdtempSync(path.join(tmpdir(), "paymaster-slow-"));
let service: RunningService;
let port: number;
before(async () => {
  service = await startService(
    embeddedEnv(dataDir, {
      HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
      HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      HTTP_KEEP_ALIVE_TIMEOUT_MS: "2000",
      HTTP_MAX_CONNECTIONS: String(MAX_CONNECTIONS),
    }),
    // The embedded database's first start is slow on a busy machine.
    120_000,
  );
  port = Number(new URL(service.baseUrl).port);
});
after(async () => {
  await service?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

interface Held {
  socket: net.Socket;
  /** Milliseconds from connect to close, once closed. */
  closedAfter: Promise<number>;
  /** What the server wrote before closing. */
  received: () => string;
}

/** A raw connection that writes `first`, then `drip` every `everyMs` until the server closes it. */
function hold(first: string, drip: string | undefined, everyMs = 400): Promise<Held> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1");
    const started = performance.now();
    let received = "";
    let timer: NodeJS.Timeout | undefined;
    socket.on("data", (chunk) => (received += chunk));
    socket.on("error", () => {});
    const closedAfter = new Promise<number>((done) =>
      socket.once("close", () => {
        clearInterval(timer);
        done(performance.now() - started);
      }),
    );
    socket.once("connect", () => {
      if (first) socket.write(first);
      if (drip) timer = setInterval(() => socket.writable && socket.write(drip), everyMs);
      resolve({ socket, closedAfter, received: () => received });
    });
    socket.once("error", reject);
  });
}

/** A well-behaved client: one request on a fresh connection, answered with the 401 of a missing token. */
async function ordinaryRequest(): Promise<number> {
  const response = await fetch(`${service.baseUrl}/api/v2/public/sdk/paymasterParameters`, {
    headers: { connection: "close" },
  });
  await response.arrayBuffer();
  return response.status;
}

const HEADER_START = "GET /api/v2/public/sdk/paymasterParameters HTTP/1.1\r\nHost: x\r\n";

describe("slow clients", () => {
  test("silent, header-dripping and body-dripping sockets are closed after their timeouts; others are answered meanwhile", async () => {
    const silent = await Promise.all(Array.from({ length: 20 }, () => hold("", undefined)));
    const dripHeaders = await Promise.all(Array.from({ length: 80 }, () => hold(HEADER_START, "X", HEADER_DRIP_MS)));
    const dripBody = await Promise.all(
      Array.from({ length: 10 }, () =>
        hold(
          "POST /api/v2/public/sdk/webhook HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{",
          " ",
        ),
      ),
    );

    // While 110 sockets are held open, other clients keep getting answers.
    const answered: number[] = [];
    while (answered.length < 10) {
      answered.push(await ordinaryRequest());
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.deepEqual(answered, Array(10).fill(401));

    const closed = async (held: Held[]) => Math.max(...(await Promise.all(held.map((h) => h.closedAfter))));
    const silentMs = await closed(silent);
    const headersMs = await closed(dripHeaders);
    const bodyMs = await closed(dripBody);
    assert.ok(silentMs < HEADERS_TIMEOUT_MS + HEADERS_SLACK_MS, `silent sockets closed after ${silentMs} ms`);
    assert.ok(headersMs < HEADERS_TIMEOUT_MS + HEADERS_SLACK_MS, `header drippers closed after ${headersMs} ms`);
    assert.ok(bodyMs >= REQUEST_TIMEOUT_MS - 100, `body drippers are given the request timeout (${bodyMs} ms)`);
    assert.ok(bodyMs < REQUEST_TIMEOUT_MS + SLACK_MS, `body drippers closed after ${bodyMs} ms`);
    // Each is told why it was cut off, and none got a request through.
    for (const held of [...silent, ...dripHeaders]) {
      assert.match(
        held.received(),
        /^HTTP\/1\.1 408 Request Timeout\r\n[\s\S]*"Request headers did not arrive in time"/,
      );
    }
    for (const held of dripBody) assert.match(held.received(), /^HTTP\/1\.1 408/);

    assert.equal(await ordinaryRequest(), 401, "the service still answers afterwards");
  });

  test("connections beyond the cap are closed at once, and are accepted again once the held ones are gone", async () => {
    // One more than the cap, all open together: whichever the server accepts last is the one too many, whatever the
    // order they arrive in. It is closed without a word; the others are held until their headers timeout's 408.
    const held = await Promise.all(Array.from({ length: MAX_CONNECTIONS + 1 }, () => hold(HEADER_START, "X")));
    const closedMs = await Promise.all(held.map((h) => h.closedAfter));
    const unanswered = closedMs.filter((_, i) => held[i]?.received() === "");
    assert.equal(unanswered.length, 1, "exactly one connection, the one over the cap, got no answer");
    const [extraClosedMs = Number.NaN] = unanswered;
    assert.ok(extraClosedMs < HEADERS_TIMEOUT_MS, `closed at once (${extraClosedMs} ms), not by a timeout`);
    assert.equal(await ordinaryRequest(), 401);
  });

  test("once a request has arrived, the silent-connection timeout no longer applies: keep-alive does", async () => {
    const socket = await hold(`${HEADER_START}\r\n`, undefined);
    const closedMs = await socket.closedAfter;
    // All the connection got: the answer to its request, and no 408 from the headers deadline, whose time had passed.
    assert.match(socket.received(), /^HTTP\/1\.1 401/);
    assert.equal(socket.received().match(/^HTTP\/1\.1 /gm)?.length, 1, socket.received());
    assert.ok(closedMs >= 2000, `kept alive for the keep-alive timeout (${closedMs} ms)`);
  });
});

test("the defaults: headers 10 s, request 30 s, keep-alive 72 s, 4,096 connections", async () => {
  assert.deepEqual(DEFAULT_HTTP_LIMITS, {
    headersTimeoutMs: 10_000,
    requestTimeoutMs: 30_000,
    keepAliveTimeoutMs: 72_000,
    maxConnections: 4096,
  });
  const t = await startTestApp();
  try {
    const server = t.app.server;
    assert.deepEqual(
      [server.headersTimeout, server.requestTimeout, server.keepAliveTimeout, server.maxConnections],
      [10_000, 30_000, 72_000, 4096],
    );
  } finally {
    await t.close();
  }
});
