// Benchmark: the event endpoints (docs/events.md). Three figures, each from one run:
// 1. cpu: the service's CPU per sponsorship for a paymaster with one endpoint subscribed to sponsorship.signed against
//    the same set-up without one, A/B in alternating rounds (app.inject, groups of 50 concurrent requests). The
//    endpoint's rounds include delivering every event they made: a round ends once its receiver has them all. The
//    receiver runs in a child process, so its CPU is not the service's.
// 2. throughput: deliveries per second to that local receiver: a replay queues --events events at once to one
//    endpoint, delivered one after the other (their order), timed from the replay to the last delivery.
// 3. delay: from an operation's inclusion (its handleOps transaction mined on anvil) to the receiver getting its
//    sponsorship.included, with settlement polling every 2 s as the service configures it: p50 and p99.
//   npx tsx bench/events.ts                          all three, on PGlite
//   DATABASE_URL=postgres://… npx tsx bench/events.ts    the same on PostgreSQL (a schema of its own)
//   options: --parts cpu,throughput,delay, --rounds N (per arm, default 5), --requests N (per round, default 500),
//            --events N (throughput, default 2000), --operations N (delay, default 40)
import { type ChildProcess, fork } from "node:child_process";
import { parseArgs } from "node:util";
import { parseEventLogs } from "viem";
import { entryPointAbi } from "../src/bindings/entryPoints/entryPoint";
import { startSettlement } from "../src/settlement/watcher";
import { anvilKeys, handleOps, signByAccount } from "../test/contracts/fixtures";
import { type Dapp, startTestApp, type TestApp } from "../test/helpers/app";
import {
  chainDapp,
  deposit,
  freshOperation,
  ONE_ETHER,
  requestSponsorship,
  startChainApp,
} from "../test/helpers/chainApp";
import { addPolicy, linkFundingWallet } from "../test/helpers/dappSetup";
import { userOpV06 } from "../test/helpers/userOps";

const { values } = parseArgs({
  options: {
    parts: { type: "string", default: "cpu,throughput,delay" },
    rounds: { type: "string", default: "5" },
    requests: { type: "string", default: "500" },
    events: { type: "string", default: "2000" },
    operations: { type: "string", default: "40" },
    /** Internal: this process is the receiver (a child of the bench). */
    receiver: { type: "boolean", default: false },
  },
});

const SENDER = "0x4dF23B78543F5c2F9CBCDF09956288B3e97bb9a4";
const database = process.env.DATABASE_URL ? "PostgreSQL" : "PGlite";
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const percentile = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((xs.length * p) / 100) - 1)] as number;

/** The receiver child: answers 204 to every POST and reports each event's type and arrival time to the bench. */
async function runReceiver(): Promise<void> {
  const { createServer } = await import("node:http");
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const arrivedMs = Date.now();
      const event = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
        type: string;
        data: { userOpHash?: string };
      };
      response.writeHead(204);
      response.end();
      process.send?.({ type: event.type, userOpHash: event.data.userOpHash, arrivedMs });
    });
  });
  server.listen(0, "127.0.0.1", () => {
    const address = server.address();
    process.send?.({ port: typeof address === "object" && address ? address.port : 0 });
  });
}

interface Arrival {
  type: string;
  userOpHash?: string;
  arrivedMs: number;
}

/** A receiver in a child process: its URL, every arrival so far, and a wait for a count of them. */
async function startReceiver(): Promise<{
  url: string;
  arrivals: Arrival[];
  until(count: number): Promise<void>;
  stop(): void;
}> {
  const child: ChildProcess = fork(import.meta.filename, ["--receiver"], { execArgv: ["--import", "tsx"] });
  const arrivals: Arrival[] = [];
  const waiting: { count: number; resolve: () => void }[] = [];
  const port = await new Promise<number>((resolve) => {
    child.on("message", (message: { port?: number } & Arrival) => {
      if (message.port !== undefined) return resolve(message.port);
      arrivals.push(message);
      for (const wait of waiting.filter((w) => arrivals.length >= w.count)) {
        waiting.splice(waiting.indexOf(wait), 1);
        wait.resolve();
      }
    });
  });
  return {
    url: `http://127.0.0.1:${port}/events`,
    arrivals,
    until: (count) =>
      arrivals.length >= count ? Promise.resolve() : new Promise((resolve) => waiting.push({ count, resolve })),
    stop: () => child.kill(),
  };
}

async function sponsoringDapp(t: TestApp): Promise<Dapp> {
  const dapp = await t.dapp();
  await linkFundingWallet(t, dapp);
  await addPolicy(t, dapp, "WALLET_DEPLOYMENT", {});
  return dapp;
}

async function addEndpoint(t: TestApp, dapp: Dapp, url: string): Promise<string> {
  const reply = await t.call("POST", "event-endpoints", {
    token: dapp.token,
    apiKey: dapp.apiKey,
    body: { url, events: ["sponsorship.signed"] },
  });
  if (reply.status !== 200) throw new Error(`endpoint: ${JSON.stringify(reply.body)}`);
  return (reply.body.data as { id: string }).id;
}

let nonce = 0;
/** `count` sponsorships in groups of 50 concurrent requests through app.inject. */
async function sponsorMany(t: TestApp, dapp: Dapp, count: number): Promise<void> {
  const one = () =>
    t.app.inject({
      method: "POST",
      url: `/api/v1/${dapp.chainId}/${dapp.apiKey}`,
      headers: { "content-type": "application/json" },
      payload: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "pm_sponsorUserOperation",
        params: [userOpV06(SENDER, nonce++), { mode: "SPONSORED" }],
      }),
    });
  for (let done = 0; done < count; done += 50) {
    const replies = await Promise.all(Array.from({ length: Math.min(50, count - done) }, one));
    const bad = replies.find((reply) => reply.statusCode !== 200 || reply.json().result?.paymasterAndData === "0x");
    if (bad) throw new Error(`sponsorship failed: ${bad.body}`.slice(0, 300));
  }
}

async function cpuPart(): Promise<void> {
  const rounds = Number(values.rounds);
  const requests = Number(values.requests);
  const receiver = await startReceiver();
  const t = await startTestApp();
  try {
    const without = await sponsoringDapp(t);
    const withEndpoint = await sponsoringDapp(t);
    await addEndpoint(t, withEndpoint, receiver.url);
    // Warm-up of both paths (statements planned, caches filled, the first deliveries made).
    await sponsorMany(t, without, 100);
    await sponsorMany(t, withEndpoint, 100);
    await receiver.until(100);
    const figures: Record<"none" | "endpoint", number[]> = { none: [], endpoint: [] };
    for (let round = 0; round < rounds; round++) {
      for (const arm of round % 2 === 0 ? (["none", "endpoint"] as const) : (["endpoint", "none"] as const)) {
        const expected = receiver.arrivals.length + (arm === "endpoint" ? requests : 0);
        const started = process.cpuUsage();
        await sponsorMany(t, arm === "endpoint" ? withEndpoint : without, requests);
        await receiver.until(expected);
        const used = process.cpuUsage(started);
        figures[arm].push((used.user + used.system) / requests);
      }
    }
    const none = median(figures.none);
    const endpoint = median(figures.endpoint);
    console.log(`${database}: service CPU per sponsorship, median of ${rounds} rounds of ${requests} (each round's)`);
    console.log(
      `  no endpoint:             ${none.toFixed(0)} µs  (${figures.none.map((x) => x.toFixed(0)).join(", ")})`,
    );
    console.log(
      `  one endpoint subscribed: ${endpoint.toFixed(0)} µs  (${figures.endpoint.map((x) => x.toFixed(0)).join(", ")}), ` +
        `+${(endpoint - none).toFixed(0)} µs (+${(((endpoint - none) / none) * 100).toFixed(0)} %), its delivery included`,
    );
  } finally {
    await t.close();
    receiver.stop();
  }
}

async function throughputPart(): Promise<void> {
  const count = Number(values.events);
  const receiver = await startReceiver();
  const t = await startTestApp();
  try {
    const dapp = await sponsoringDapp(t);
    const id = await addEndpoint(t, dapp, receiver.url);
    // Off while the events are made: they are kept (an endpoint subscribes) but queued to nobody.
    await t.call("PATCH", `event-endpoints/${id}`, {
      token: dapp.token,
      apiKey: dapp.apiKey,
      body: { enabled: false },
    });
    const from = Date.now();
    await sponsorMany(t, dapp, count);
    await t.call("PATCH", `event-endpoints/${id}`, { token: dapp.token, apiKey: dapp.apiKey, body: { enabled: true } });
    const started = performance.now();
    const replay = await t.call("POST", `event-endpoints/${id}/replay`, {
      token: dapp.token,
      apiKey: dapp.apiKey,
      body: { from, to: Date.now() + 1 },
    });
    if ((replay.body.data as { queued: number }).queued !== count) throw new Error(JSON.stringify(replay.body));
    await receiver.until(count);
    const seconds = (performance.now() - started) / 1000;
    console.log(
      `${database}: ${count} deliveries to one local endpoint in ${seconds.toFixed(2)} s: ` +
        `${(count / seconds).toFixed(0)} deliveries/s (one at a time, in order)`,
    );
  } finally {
    await t.close();
    receiver.stop();
  }
}

async function delayPart(): Promise<void> {
  const count = Number(values.operations);
  const receiver = await startReceiver();
  const app = await startChainApp();
  // Settlement as the service runs it: its own timer, every 2 s.
  const settlement = startSettlement(app.t.ctx);
  try {
    const dapp = await chainDapp(app.t, anvilKeys.fundingWallet);
    await deposit(app, ONE_ETHER);
    const reply = await app.t.call("POST", "event-endpoints", {
      token: dapp.token,
      apiKey: dapp.apiKey,
      body: { url: receiver.url, events: ["sponsorship.included"] },
    });
    if (reply.status !== 200) throw new Error(JSON.stringify(reply.body));
    const delays: number[] = [];
    for (let i = 0; i < count; i++) {
      const { op, owner } = await freshOperation(app);
      const answer = await requestSponsorship(app.t, dapp, op);
      const signed = await signByAccount(app.env, { ...op, paymasterAndData: answer.paymasterAndData }, owner);
      const receipt = await handleOps(app.env, [signed]);
      const minedMs = Date.now();
      const [event] = parseEventLogs({ abi: entryPointAbi, logs: receipt.logs, eventName: "UserOperationEvent" });
      const hash = event?.args.userOpHash;
      await receiver.until(i + 1);
      const arrival = receiver.arrivals.find((a) => a.type === "sponsorship.included" && a.userOpHash === hash);
      if (!arrival) throw new Error("the included event is not the operation's");
      delays.push(arrival.arrivedMs - minedMs);
      // A random pause, so that inclusions fall at every point of settlement's 2 s cycle.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 2000));
    }
    console.log(
      `${database}: inclusion to delivery of sponsorship.included, settlement polling every 2 s, ${count} operations: ` +
        `p50 ${percentile(delays, 50)} ms, p99 ${percentile(delays, 99)} ms (min ${Math.min(...delays)}, max ${Math.max(...delays)})`,
    );
  } finally {
    await settlement.stop();
    await app.close();
    receiver.stop();
  }
}

if (values.receiver) {
  await runReceiver();
} else {
  const parts = values.parts.split(",");
  if (parts.includes("cpu")) await cpuPart();
  if (parts.includes("throughput")) await throughputPart();
  if (parts.includes("delay")) await delayPart();
}
