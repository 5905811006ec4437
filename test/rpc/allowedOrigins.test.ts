// A paymaster's allowed origins over real HTTP (the app listening on a port, fetch as the client): an unlisted Origin
// gets 403 and a JSON-RPC error naming it, with no Access-Control-Allow-Origin, before any work; a listed one its own
// Access-Control-Allow-Origin (never *); preflights likewise; calls without an Origin pass unless requireOrigin.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { listSponsorships } from "../../src/storage/sponsorships";
import { type Dapp, startTestApp, type TestApp } from "../helpers/app";
import { addPolicy, linkFundingWallet } from "../helpers/dappSetup";
import { userOpV06 } from "../helpers/userOps";

const APP = "https://app.example.com";
const EVIL = "https://evil.example.net";
let t: TestApp;
let base: string;
before(async () => {
  t = await startTestApp();
  base = await t.app.listen({ port: 0, host: "127.0.0.1" });
});
after(() => t.close());

interface RpcAnswer {
  jsonrpc: string;
  id: number;
  result?: { paymasterAndData: string };
  error?: { code: number; message: string };
}

let nonce = 0;
async function post(dapp: Dapp, origin?: string) {
  const response = await fetch(`${base}/api/v1/${dapp.chainId}/${dapp.apiKey}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(origin ? { origin } : {}) },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 3,
      method: "pm_sponsorUserOperation",
      params: [userOpV06("0x4dF23B78543F5c2F9CBCDF09956288B3e97bb9a4", nonce++), { mode: "SPONSORED" }],
    }),
  });
  const body = (await response.json()) as RpcAnswer;
  return { status: response.status, headers: response.headers, body };
}

async function preflight(dapp: Dapp, origin: string) {
  const response = await fetch(`${base}/api/v1/${dapp.chainId}/${dapp.apiKey}`, {
    method: "OPTIONS",
    headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": "content-type" },
  });
  await response.arrayBuffer();
  return { status: response.status, headers: response.headers };
}

async function setOrigins(dapp: Dapp, body: Record<string, unknown>) {
  return t.call("PATCH", "paymasterParameters", {
    token: dapp.token,
    apiKey: dapp.apiKey,
    body: { paymasterId: dapp.paymasterId, type: "allowedOrigins", ...body },
  });
}

async function sponsoringDapp() {
  const dapp = await t.dapp();
  await linkFundingWallet(t, dapp);
  await addPolicy(t, dapp, "WALLET_DEPLOYMENT", {});
  return dapp;
}

test("no origins set: any origin, and none, is answered with Access-Control-Allow-Origin *", async () => {
  const dapp = await sponsoringDapp();
  for (const origin of [EVIL, undefined]) {
    const reply = await post(dapp, origin);
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    assert.equal(reply.headers.get("access-control-allow-origin"), "*");
  }
  assert.equal((await preflight(dapp, EVIL)).headers.get("access-control-allow-origin"), "*");
});

test("a listed origin gets its own Access-Control-Allow-Origin and Vary: Origin, on the call and its preflight", async () => {
  const dapp = await sponsoringDapp();
  const set = await setOrigins(dapp, { origins: ["https://APP.example.com:443/", "http://localhost:5173"] });
  assert.equal(set.status, 200, JSON.stringify(set.body));
  const data = set.body.data as { allowedOrigins: string[]; requireOrigin: boolean };
  assert.deepEqual([data.allowedOrigins, data.requireOrigin], [[APP, "http://localhost:5173"], false]);

  const reply = await post(dapp, APP);
  assert.equal(reply.status, 200);
  assert.notEqual(reply.body.result?.paymasterAndData, "0x");
  assert.equal(reply.headers.get("access-control-allow-origin"), APP);
  assert.equal(reply.headers.get("vary"), "Origin");
  const allowed = await preflight(dapp, "http://localhost:5173");
  assert.equal(allowed.status, 204);
  assert.equal(allowed.headers.get("access-control-allow-origin"), "http://localhost:5173");
  assert.equal(allowed.headers.get("access-control-allow-methods"), "POST, OPTIONS");
});

test("an unlisted origin: 403, -32010 naming it, no Access-Control-Allow-Origin, nothing recorded; its preflight 403", async () => {
  const dapp = await sponsoringDapp();
  await setOrigins(dapp, { origins: [APP] });
  const reply = await post(dapp, EVIL);
  assert.equal(reply.status, 403);
  assert.deepEqual(reply.body, {
    jsonrpc: "2.0",
    id: 3,
    error: { code: -32010, message: `Origin "${EVIL}" is not allowed to use this paymaster (allowedOrigins)` },
  });
  assert.equal(reply.headers.get("access-control-allow-origin"), null);
  assert.deepEqual(await listSponsorships(t.db, dapp.paymasterId), []);

  const refused = await preflight(dapp, EVIL);
  assert.equal(refused.status, 403);
  assert.equal(refused.headers.get("access-control-allow-origin"), null);
});

test("no Origin: unaffected by the list, refused with 403 once requireOrigin is true; an empty list allows any again", async () => {
  const dapp = await sponsoringDapp();
  await setOrigins(dapp, { origins: [APP] });
  const server = await post(dapp);
  assert.equal(server.status, 200);
  assert.equal(server.headers.get("access-control-allow-origin"), "*");

  await setOrigins(dapp, { origins: [APP], requireOrigin: true });
  const required = await post(dapp);
  assert.equal(required.status, 403);
  assert.equal(required.body.error?.code, -32010);
  assert.match(required.body.error?.message ?? "", /^Origin header required/);
  assert.equal((await post(dapp, APP)).status, 200);

  // requireOrigin left out stays as it is; the list emptied lets any origin in, but still not a call without one.
  const emptied = await setOrigins(dapp, { origins: [] });
  assert.equal((emptied.body.data as { requireOrigin: boolean }).requireOrigin, true);
  assert.equal((await post(dapp, EVIL)).status, 200);
  assert.equal((await post(dapp)).status, 403);
});

test("bad origin settings are refused naming the field; another paymaster's id is not found", async () => {
  const dapp = await sponsoringDapp();
  const cases: [Record<string, unknown>, number, string][] = [
    [
      { origins: ["app.example.com"] },
      400,
      "origins[0] must be a web origin like https://app.example.com (scheme, host and port only, at most 200 characters)",
    ],
    [
      { origins: [APP, "https://app.example.com/path"] },
      400,
      "origins[1] must be a web origin like https://app.example.com (scheme, host and port only, at most 200 characters)",
    ],
    [{ origins: "https://app.example.com" }, 400, "origins must be an array"],
    [{ origins: [APP], requireOrigin: "yes" }, 400, "requireOrigin must be a boolean"],
    [{}, 400, "origins is required"],
  ];
  for (const [body, status, message] of cases) {
    const reply = await setOrigins(dapp, body);
    assert.deepEqual([reply.status, reply.body.message], [status, message], JSON.stringify(body));
  }
  const other = await t.dapp();
  const wrongId = await t.call("PATCH", "paymasterParameters", {
    token: dapp.token,
    apiKey: dapp.apiKey,
    body: { paymasterId: other.paymasterId, type: "allowedOrigins", origins: [APP] },
  });
  assert.deepEqual([wrongId.status, wrongId.body.message], [404, "Paymaster not found"]);
  const listed = await t.call("GET", "paymasterParameters", { token: dapp.token });
  const mine = (listed.body.data as { paymasterId: string; allowedOrigins: string[] }[]).find(
    (p) => p.paymasterId === dapp.paymasterId,
  );
  assert.deepEqual(mine?.allowedOrigins, [], "nothing was written by the refused updates");
});
