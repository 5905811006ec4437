// PATCH /paymasterParameters {type: "depositAlert"}: what it accepts, the 400s naming the field, the URL checked like a
// webhook's (private addresses refused unless allowed), null turning the alerts off.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { generatePrivateKey } from "viem/accounts";
import { Secret } from "../../src/config";
import { findAlertSettings } from "../../src/storage/alerts";
import type { Lookup } from "../../src/webhooks/addressGuard";
import { type Dapp, startTestApp, type TestApp } from "../helpers/app";
import { dnsError } from "../helpers/dns";

const lookup: Lookup = async (hostname) => {
  if (hostname === "internal.example.com") return [{ address: "10.0.0.5", family: 4 }];
  if (hostname === "hooks.example.com") return [{ address: "93.184.216.34", family: 4 }];
  throw dnsError("ENOTFOUND", hostname);
};

let t: TestApp;
before(async () => {
  // Private addresses refused, as in production by default.
  t = await startTestApp({
    webhooks: { allowPrivate: false, timeoutMs: 2000, signingKey: new Secret(generatePrivateKey()), lookup },
  });
});
after(() => t.close());

const patch = (dapp: Dapp, body: Record<string, unknown>, path = "paymasterParameters") =>
  t.call("PATCH", path, { token: dapp.token, apiKey: dapp.apiKey, body });

test("a threshold and a url are kept; a new one replaces them; null turns them off", async () => {
  const dapp = await t.dapp();
  const url = "https://hooks.example.com/alerts?token=abc";
  const set = await patch(dapp, { paymasterId: dapp.paymasterId, type: "depositAlert", thresholdWei: "1000", url });
  assert.equal(set.status, 200, JSON.stringify(set.body));
  assert.equal(set.body.message, "Paymaster updated successfully");
  assert.equal((set.body.data as { paymasterId: string }).paymasterId, dapp.paymasterId);
  assert.deepEqual(await findAlertSettings(t.db, dapp.paymasterId), {
    paymasterId: dapp.paymasterId,
    thresholdWei: 1000n,
    url,
  });

  // The interface's other path is the same endpoint; a threshold past 2^64 is kept exactly.
  const big = "1".repeat(78);
  const replaced = await patch(
    dapp,
    { paymasterId: dapp.paymasterId, type: "depositAlert", thresholdWei: big, url: "https://hooks.example.com/b" },
    "paymaster",
  );
  assert.equal(replaced.status, 200, JSON.stringify(replaced.body));
  assert.deepEqual(await findAlertSettings(t.db, dapp.paymasterId), {
    paymasterId: dapp.paymasterId,
    thresholdWei: BigInt(big),
    url: "https://hooks.example.com/b",
  });

  const off = await patch(dapp, { paymasterId: dapp.paymasterId, type: "depositAlert", thresholdWei: "0", url: null });
  assert.equal(off.status, 200, JSON.stringify(off.body));
  assert.equal(await findAlertSettings(t.db, dapp.paymasterId), null);
});

test("bad alert settings: 400 naming the field, 404 for another paymaster; nothing is stored", async () => {
  const dapp = await t.dapp();
  const other = await t.dapp();
  const ok = {
    paymasterId: dapp.paymasterId,
    type: "depositAlert",
    thresholdWei: "1",
    url: "https://hooks.example.com/a",
  };
  const digits = "thresholdWei must be a whole number of wei as a decimal string (digits only, at most 78)";
  const cases: [Record<string, unknown>, number, string][] = [
    [{ ...ok, thresholdWei: undefined }, 400, "thresholdWei is required"],
    [{ ...ok, thresholdWei: "-1" }, 400, digits],
    [{ ...ok, thresholdWei: "1.5" }, 400, digits],
    [{ ...ok, thresholdWei: "0x10" }, 400, digits],
    [{ ...ok, thresholdWei: "" }, 400, digits],
    [{ ...ok, thresholdWei: "1".repeat(79) }, 400, digits],
    [{ ...ok, url: undefined }, 400, "url is required"],
    [{ ...ok, url: "ftp://hooks.example.com/a" }, 400, "url must be an http or https URL"],
    [{ ...ok, url: "not a url" }, 400, "url must be a valid URL"],
    [{ ...ok, url: "https://internal.example.com/a" }, 400, "url resolves to 10.0.0.5, a private address"],
    [{ ...ok, url: "http://127.0.0.1:9/a" }, 400, "url is 127.0.0.1, a loopback address"],
    [
      { ...ok, url: "https://nowhere.example.com/a" },
      400,
      "url host nowhere.example.com does not exist (DNS answered ENOTFOUND)",
    ],
    [{ ...ok, paymasterId: other.paymasterId }, 404, "Paymaster not found"],
    [{ ...ok, paymasterId: "not-a-uuid" }, 404, "Paymaster not found"],
  ];
  for (const [body, status, message] of cases) {
    const reply = await patch(dapp, body);
    assert.deepEqual([reply.status, reply.body], [status, { statusCode: status, message }], JSON.stringify(body));
  }
  assert.equal(await findAlertSettings(t.db, dapp.paymasterId), null);
});
