import assert from "node:assert/strict";
import { test } from "node:test";
import type { ChainConfig } from "../../src/config";
import { startTestApp } from "../helpers/app";

const V06 = "0x5FF137D4b0FDCD49DcA30c7CF57E578a026d2789";
const V07 = "0x0000000071727De22E5E9d8BAf0edAc6f37da032";
const V08 = "0x4337084D9E255Ff0702461CF8895CE9E3b5Ff108";
const PAYMASTER = (n: number) => `0x${String(n).repeat(40)}`;
const OP_ORACLE = "0x420000000000000000000000000000000000000f";

const CHAINS = new Map<number, ChainConfig>([
  // A known network as the default chains file gives it: EntryPoints only.
  [
    8453,
    {
      chainId: 8453,
      name: "Base",
      entryPoint: V06,
      entryPoints: { "0.7": { entryPoint: V07 }, "0.8": { entryPoint: V08 } },
      l1DataFee: { model: "op-stack", oracle: OP_ORACLE, marginPercent: 25, source: "chain id" },
    },
  ],
  // Gone live on v0.6 (verifying) and v0.8 (verifying and token), not on v0.7.
  [
    84532,
    {
      chainId: 84532,
      name: "Base Sepolia",
      verifyingPaymaster: PAYMASTER(1),
      tokenPaymaster: PAYMASTER(2),
      entryPoints: {
        "0.7": { entryPoint: V07 },
        "0.8": { verifyingPaymaster: PAYMASTER(3), tokenPaymaster: PAYMASTER(4) },
      },
      l1DataFee: { model: "arbitrum", oracle: PAYMASTER(5), marginPercent: 40, source: "chains file" },
    },
  ],
]);

test("GET chains: each chain's served EntryPoint versions with our paymasters, and its checks", async () => {
  const t = await startTestApp({ chains: CHAINS });
  try {
    const { token } = await t.account();
    const reply = await t.call("GET", "chains", { token });
    assert.equal(reply.status, 200);
    assert.equal(reply.body.message, "Supported chains fetched");
    assert.deepEqual(reply.body.data, [
      // Listed without a paymaster: served nowhere, and not an error.
      {
        chainId: 8453,
        name: "Base",
        entryPoints: {},
        // Each chain's L1 data fee model, with where it came from.
        l1DataFee: { model: "op-stack", oracle: OP_ORACLE, marginPercent: 25, source: "chain id" },
        checks: { status: "not checked", failed: [] },
      },
      {
        chainId: 84532,
        name: "Base Sepolia",
        entryPoints: {
          // The token paymaster of v0.6 only counts beside fee tokens, which this chain has none of.
          "0.6": { entryPoint: V06, verifyingPaymaster: PAYMASTER(1) },
          "0.8": { entryPoint: V08, verifyingPaymaster: PAYMASTER(3) },
        },
        l1DataFee: { model: "arbitrum", oracle: PAYMASTER(5), marginPercent: 40, source: "chains file" },
        // No rpcUrl: nothing to check against.
        checks: { status: "not checked", failed: [] },
      },
    ]);
  } finally {
    await t.close();
  }
});

test("GET chains needs an authToken", async () => {
  const t = await startTestApp({ chains: CHAINS });
  try {
    const reply = await t.call("GET", "chains");
    assert.equal(reply.status, 401);
  } finally {
    await t.close();
  }
});
