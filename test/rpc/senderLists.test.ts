// Sender lists through the RPC methods, for EntryPoint v0.6, v0.7 and v0.8 operations: a blocked sender (or one off
// the allowlist) is refused with -32003 and the reason naming it and the list, an allowed one is signed, and a list
// replaced by PATCH /paymaster-policy/{policyId} applies to the next request.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type Address, size } from "viem";
import { ENTRY_POINT_V06_ADDRESS } from "../../src/bindings/entryPoints/entryPoint";
import { ENTRY_POINT_V07_ADDRESS, ENTRY_POINT_V08_ADDRESS } from "../../src/bindings/entryPoints/entryPointV07";
import { listSponsorships } from "../../src/storage/sponsorships";
import { type Dapp, startTestApp, type TestApp } from "../helpers/app";
import { addPolicy, linkFundingWallet, rpc } from "../helpers/dappSetup";
import { ESTIMATED_GAS, userOpV06, userOpV07 } from "../helpers/userOps";

const BLOCKED: Address = "0x4dF23B78543F5c2F9CBCDF09956288b3e97bb9a4";
const ALLOWED: Address = "0x2222222222222222222222222222222222222222";

let t: TestApp;
let nonce = 0;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

const VERSIONS = [
  {
    version: "0.6",
    entryPoint: ENTRY_POINT_V06_ADDRESS,
    op: (sender: Address) => userOpV06(sender, ++nonce, ESTIMATED_GAS),
  },
  {
    version: "0.7",
    entryPoint: ENTRY_POINT_V07_ADDRESS,
    op: (sender: Address) => userOpV07(sender, ++nonce),
  },
  {
    version: "0.8",
    entryPoint: ENTRY_POINT_V08_ADDRESS,
    op: (sender: Address) => userOpV07(sender, ++nonce),
  },
];

const paymasterData = (dapp: Dapp, op: unknown, entryPoint: string) =>
  rpc(t, dapp, "pm_getPaymasterData", [op, entryPoint, "0x7a69", {}]);

async function dappWith(policyType: string, addresses: Address[], name: string) {
  const dapp = await t.dapp();
  await linkFundingWallet(t, dapp);
  const policyId = await addPolicy(t, dapp, policyType, { addresses }, name);
  return { dapp, policyId };
}

function signed(reply: Awaited<ReturnType<typeof rpc>>, version: string) {
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  const result = reply.body.result as Record<string, string>;
  if (version === "0.6") assert.equal(size(result.paymasterAndData as `0x${string}`), 276);
  else assert.ok(size(result.paymasterData as `0x${string}`) > 0, JSON.stringify(result));
}

for (const { version, entryPoint, op } of VERSIONS) {
  describe(`EntryPoint v${version}`, () => {
    test("a blocklist: the blocked sender refused with -32003 and the reason, recorded; another signed", async () => {
      const { dapp } = await dappWith("SENDER_BLOCKLIST", [BLOCKED], "abusers");
      const refused = await paymasterData(dapp, op(BLOCKED), entryPoint);
      const reason = `Sender ${BLOCKED.toLowerCase()} is on the blocklist "abusers"`;
      assert.deepEqual(
        [refused.status, refused.body.error],
        [400, { code: -32003, message: `Not sponsored: ${reason}` }],
      );
      const [record] = await listSponsorships(t.db, dapp.paymasterId);
      assert.deepEqual(record?.rule_outcomes.at(-1), { rule: "senderLists", passed: false, reason });
      signed(await paymasterData(dapp, op(ALLOWED), entryPoint), version);
    });

    test("an allowlist: a sender off it refused, one on it signed (whatever its case)", async () => {
      const { dapp } = await dappWith("SENDER_ALLOWLIST", [ALLOWED], "friends");
      const refused = await paymasterData(dapp, op(BLOCKED), entryPoint);
      assert.deepEqual(refused.body.error, {
        code: -32003,
        message: `Not sponsored: Sender ${BLOCKED.toLowerCase()} is not on the allowlist "friends"`,
      });
      signed(await paymasterData(dapp, op(ALLOWED.toUpperCase().replace("0X", "0x") as Address), entryPoint), version);
    });
  });
}

test("pm_sponsorUserOperation: the refusal is a result with 0x and the reason", async () => {
  const { dapp } = await dappWith("SENDER_BLOCKLIST", [BLOCKED], "abusers");
  const reply = await rpc(t, dapp, "pm_sponsorUserOperation", [VERSIONS[0]?.op(BLOCKED), { mode: "SPONSORED" }]);
  assert.equal(reply.status, 200);
  assert.deepEqual(
    [reply.body.result.paymasterAndData, reply.body.result.reason],
    ["0x", `Sender ${BLOCKED.toLowerCase()} is on the blocklist "abusers"`],
  );
});

test("a list replaced, paused or resumed applies to the very next request", async () => {
  const { dapp, policyId } = await dappWith("SENDER_BLOCKLIST", [BLOCKED], "abusers");
  const auth = { token: dapp.token, apiKey: dapp.apiKey };
  const v06 = VERSIONS[0] as (typeof VERSIONS)[number];
  const ask = () => paymasterData(dapp, v06.op(BLOCKED), ENTRY_POINT_V06_ADDRESS);
  assert.equal((await ask()).body.error?.code, -32003);
  const patched = await t.call("PATCH", `paymaster-policy/${policyId}`, {
    ...auth,
    body: { policyData: { addresses: [ALLOWED] } },
  });
  assert.equal(patched.status, 200);
  signed(await ask(), "0.6");
  await t.call("PATCH", `paymaster-policy/${policyId}`, { ...auth, body: { policyData: { addresses: [BLOCKED] } } });
  assert.equal((await ask()).body.error?.code, -32003);
  assert.equal((await t.call("PATCH", `paymaster-policy/deactivate/${policyId}`, auth)).status, 200);
  // Paused, the list is no rule at all: with nothing else to pay for, rule 1 refuses.
  assert.match((await ask()).body.error?.message ?? "", /^Not sponsored: No policies were set/);
  await addPolicy(t, dapp, "WALLET_DEPLOYMENT", {});
  signed(await ask(), "0.6");
  assert.equal((await t.call("PATCH", `paymaster-policy/activate/${policyId}`, auth)).status, 200);
  assert.equal((await ask()).body.error?.code, -32003);
});

test("a blocked sender among 100,000 listed addresses is refused, one off the list signed", async () => {
  const many = Array.from({ length: 100_000 }, (_, i) => `0x${(i + 1).toString(16).padStart(40, "0")}` as Address);
  many[77_777] = BLOCKED;
  const { dapp } = await dappWith("SENDER_BLOCKLIST", many, "many");
  const v06 = VERSIONS[0] as (typeof VERSIONS)[number];
  assert.equal((await paymasterData(dapp, v06.op(BLOCKED), ENTRY_POINT_V06_ADDRESS)).body.error?.code, -32003);
  signed(await paymasterData(dapp, v06.op(ALLOWED), ENTRY_POINT_V06_ADDRESS), "0.6");
});
