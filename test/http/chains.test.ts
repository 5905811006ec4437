import assert from "node:assert/strict";
import { test } from "node:test";
import type { ChainConfig } from "../../src/config";
import { startTestApp } from "../helpers/app";

const V06 = "0x5FF137D4b0FDCD49DcA30c7CF57E578a026d2789";
const V07 = "0x0000000071727De22E5E9d8BAf0edAc6f37da032";
const V08 = "0x4337084D9E255Ff0702461CF8895CE9E3b5Ff108";
const PAYMASTER = (n: number) => `0x${String(n).repeat(40)}`;
const USDC = "0x036cbd53842c5426634e7929541ec2318f3dcf7e";
const DAI = "0x7683022d84f726a96c4a6611cd31dbf5409c0ac9";
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
  // Gone live on v0.6 (verifying and token) and v0.8 (verifying, token and up-front token), not on v0.7, with two fee
  // tokens: one whose permit runs in validation (USDC's), one without.
  [
    84532,
    {
      chainId: 84532,
      name: "Base Sepolia",
      verifyingPaymaster: PAYMASTER(1),
      tokenPaymaster: PAYMASTER(2),
      tokens: [
        {
          address: USDC,
          symbol: "USDC",
          decimals: 6,
          price: { fixedRate: 3_000_000_000n },
          markup: 1_100_000,
          permit: true,
        },
        { address: DAI, symbol: "DAI", decimals: 18, price: { fixedRate: 3_000n * 10n ** 18n }, markup: 1_100_000 },
      ],
      entryPoints: {
        "0.7": { entryPoint: V07 },
        "0.8": { verifyingPaymaster: PAYMASTER(3), tokenPaymaster: PAYMASTER(4), permitTokenPaymaster: PAYMASTER(6) },
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
        feeTokens: [],
        // Each chain's L1 data fee model, with where it came from.
        l1DataFee: { model: "op-stack", oracle: OP_ORACLE, marginPercent: 25, source: "chain id" },
        checks: { status: "not checked", failed: [] },
      },
      {
        chainId: 84532,
        name: "Base Sepolia",
        entryPoints: {
          "0.6": { entryPoint: V06, verifyingPaymaster: PAYMASTER(1), tokenPaymaster: PAYMASTER(2) },
          "0.8": {
            entryPoint: V08,
            verifyingPaymaster: PAYMASTER(3),
            tokenPaymaster: PAYMASTER(4),
            permitTokenPaymaster: PAYMASTER(6),
          },
        },
        // What a wallet needs to offer each token, and whether it can pay a first operation with a permit.
        feeTokens: [
          { address: USDC, symbol: "USDC", decimals: 6, permit: true },
          { address: DAI, symbol: "DAI", decimals: 18, permit: false },
        ],
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
