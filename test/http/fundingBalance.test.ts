// GET funding-balance/{paymasterId}: the funding wallet's deposit in our verifying paymaster of each EntryPoint version,
// read from the local chain as the service starts it (real EntryPoint v0.6, v0.7, v0.8 and our paymasters).
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { type Address, parseEther } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { verifyingPaymasterV07Artifact } from "../../src/bindings/paymasters/artifacts";
import { anvilKeys } from "../contracts/fixtures";
import { confirm, type LocalStacks, startLocalStacks } from "../contracts/v07/localStacks";
import { type Dapp, startTestApp, type TestApp } from "../helpers/app";
import { linkFundingWallet } from "../helpers/dappSetup";

let env: LocalStacks;
let t: TestApp;
before(async () => {
  env = await startLocalStacks();
  t = await startTestApp({
    chains: new Map([
      [31337, { chainId: 31337, name: "local", rpcUrl: env.chain.rpcUrl }],
      // A node that does not answer, with a secret in its URL that no answer may show.
      [
        80002,
        {
          chainId: 80002,
          name: "Polygon Amoy",
          rpcUrl: "http://127.0.0.1:2/secret-key",
          verifyingPaymaster: "0x00000000000000000000000000000000000000a6",
        },
      ],
    ]),
  });
});
after(async () => {
  await t?.close();
  await env?.stop();
});

interface Deposit {
  version: string;
  entryPoint: string;
  verifyingPaymaster: string | null;
  balance: string | null;
  error?: string;
}
interface FundingBalance extends Omit<Deposit, "version"> {
  paymasterId: string;
  chainId: number;
  fundingWalletAddress: string | null;
  entryPoints: Deposit[];
}

async function fundingBalance(dapp: Dapp, paymasterId = dapp.paymasterId) {
  return t.call("GET", `funding-balance/${paymasterId}`, { token: dapp.token, apiKey: dapp.apiKey });
}

/** Deposits `value` for `wallet` in the paymaster (the v0.6 and v0.7 contracts share depositFor). */
async function depositFor(paymaster: Address, wallet: Address, value: bigint) {
  await confirm(
    env,
    env.wallet(anvilKeys.stranger).writeContract({
      address: paymaster,
      abi: verifyingPaymasterV07Artifact.abi,
      functionName: "depositFor",
      args: [wallet],
      value,
    }),
  );
}

test("a funding wallet's deposit on every version's verifying paymaster, v0.6 also in the top-level fields", async () => {
  const dapp = await t.dapp({ chainId: 31337 });
  const wallet = privateKeyToAccount(anvilKeys.otherFundingWallet).address;
  await linkFundingWallet(t, dapp, anvilKeys.otherFundingWallet);
  const { info } = env.chain;
  const amounts = {
    "0.6": parseEther("0.06"),
    "0.7": parseEther("0.07"),
    "0.8": parseEther("0.08"),
    "0.9": parseEther("0.09"),
  };
  await depositFor(info.verifyingPaymaster, wallet, amounts["0.6"]);
  await depositFor(info.entryPoints["0.7"].verifyingPaymaster, wallet, amounts["0.7"]);
  await depositFor(info.entryPoints["0.8"].verifyingPaymaster, wallet, amounts["0.8"]);
  // VerifyingPaymasterV09's depositFor reads as VerifyingPaymasterV07's.
  await depositFor(info.entryPoints["0.9"].verifyingPaymaster, wallet, amounts["0.9"]);

  const reply = await fundingBalance(dapp);
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  assert.equal(reply.body.message, "Funding balance fetched");
  const data = reply.body.data as FundingBalance;
  assert.deepEqual(data, {
    paymasterId: dapp.paymasterId,
    chainId: 31337,
    fundingWalletAddress: wallet.toLowerCase(),
    entryPoint: info.entryPoint,
    verifyingPaymaster: info.verifyingPaymaster,
    balance: amounts["0.6"].toString(),
    entryPoints: [
      {
        version: "0.6",
        entryPoint: info.entryPoint,
        verifyingPaymaster: info.verifyingPaymaster,
        balance: "60000000000000000",
        // Nothing sponsored yet: the whole deposit is available.
        held: "0",
        available: "60000000000000000",
      },
      ...(["0.7", "0.8", "0.9"] as const).map((version) => ({
        version,
        entryPoint: info.entryPoints[version].entryPoint,
        verifyingPaymaster: info.entryPoints[version].verifyingPaymaster,
        balance: amounts[version].toString(),
        held: "0",
        available: amounts[version].toString(),
      })),
    ],
  });
});

test("without a funding wallet nothing is read, and each version says why its balance is null", async () => {
  const dapp = await t.dapp({ chainId: 31337 });
  const reply = await fundingBalance(dapp);
  assert.equal(reply.status, 200);
  const data = reply.body.data as FundingBalance;
  assert.equal(data.fundingWalletAddress, null);
  assert.equal(data.balance, null);
  assert.equal(data.error, "no funding wallet is linked to the paymaster");
  assert.deepEqual(
    data.entryPoints.map((entry) => [entry.version, entry.balance, entry.error]),
    ["0.6", "0.7", "0.8", "0.9"].map((version) => [version, null, "no funding wallet is linked to the paymaster"]),
  );
});

test("a node that does not answer: balances null with the reason, never the RPC URL", async () => {
  const dapp = await t.dapp({ chainId: 80002 });
  await linkFundingWallet(t, dapp);
  const reply = await fundingBalance(dapp);
  assert.equal(reply.status, 200);
  const data = reply.body.data as FundingBalance;
  // Amoy lists no later EntryPoint here: v0.6 alone.
  assert.deepEqual(
    data.entryPoints.map((entry) => [entry.version, entry.balance, entry.error]),
    [["0.6", null, "connection refused"]],
  );
  assert.deepEqual([data.balance, data.error], [null, "connection refused"]);
  assert.doesNotMatch(JSON.stringify(reply.body), /secret-key/);
});

test("another paymaster's id is not found", async () => {
  const dapp = await t.dapp({ chainId: 31337 });
  const other = await t.dapp({ chainId: 31337 });
  const reply = await fundingBalance(dapp, other.paymasterId);
  assert.equal(reply.status, 404);
  assert.equal(reply.body.message, "Paymaster not found");
});
