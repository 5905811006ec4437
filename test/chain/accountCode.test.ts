// The account code cache behind the deployment decision: contract code is kept (it cannot change back), while no code,
// an EIP-7702 delegation and a failed read are asked again on the next request, and concurrent reads share one call.
// The reads are counted through the cache's own getCode option; the real eth_getCode is test/rpc/deployedSender.test.ts.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Address, Hex } from "viem";
import { AccountCodes, accountCodeOf } from "../../src/chain/accountCode";

const ACCOUNT: Address = "0x1111111111111111111111111111111111111111";

function counted(answers: (Hex | Error)[]) {
  let calls = 0;
  let nowMs = 0;
  const cache = new AccountCodes(
    {},
    {
      getCode: async () => {
        const answer = answers[Math.min(calls, answers.length - 1)];
        calls += 1;
        if (answer instanceof Error) throw answer;
        return answer;
      },
    },
  );
  // Read at the test's clock, which `advance` moves.
  const codes = { read: (address: Address) => cache.read(address, nowMs) };
  return { codes, calls: () => calls, advance: (ms: number) => (nowMs += ms) };
}

test("contract code is read once and kept for ten minutes, then read again", async () => {
  const { codes, calls, advance } = counted(["0x6080AB"]);
  assert.deepEqual(await codes.read(ACCOUNT), { ok: true, code: "0x6080ab" });
  assert.deepEqual(await codes.read(ACCOUNT.toUpperCase() as Address), { ok: true, code: "0x6080ab" });
  assert.equal(calls(), 1);
  advance(10 * 60_000);
  await codes.read(ACCOUNT);
  assert.equal(calls(), 2);
});

test("no code, a delegation and a failure are not kept: the next request asks again", async () => {
  const cases: [string, Hex | Error, object][] = [
    ["no code", "0x", { ok: true, code: "0x" }],
    [
      "an EIP-7702 delegation",
      "0xef01001111111111111111111111111111111111111111",
      { ok: true, code: "0xef01001111111111111111111111111111111111111111" },
    ],
    ["a failed read", new Error("boom"), { ok: false, error: "an unexpected failure" }],
  ];
  for (const [name, answer, expected] of cases) {
    const { codes, calls } = counted([answer]);
    assert.deepEqual(await codes.read(ACCOUNT), expected, name);
    await codes.read(ACCOUNT);
    assert.equal(calls(), 2, name);
  }
});

test("reads of one address under way at once share one call", async () => {
  const { codes, calls } = counted(["0x60"]);
  const readings = await Promise.all([codes.read(ACCOUNT), codes.read(ACCOUNT), codes.read(ACCOUNT)]);
  assert.equal(calls(), 1);
  for (const reading of readings) assert.deepEqual(reading, { ok: true, code: "0x60" });
});

test("a chain without an RPC has no reader; one with an RPC but none made (a hand-built chain) gets one", () => {
  assert.equal(accountCodeOf({}), undefined);
  assert.ok(accountCodeOf({ rpcUrl: "http://127.0.0.1:9" }) instanceof AccountCodes);
});
