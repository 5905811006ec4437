// pm_sponsorUserOperation with calculateGasLimits: true, in front of anvil: the estimated values are what is signed,
// recorded and returned; a revert in estimation is the client's -32602 with the reason; an unreachable node is a
// retryable -32002 with HTTP 503 within the bound; a chain that cannot estimate says so.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { encodeFunctionData, type Hex, parseEther, recoverMessageAddress, zeroAddress } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import type { UserOperation } from "../../src/bindings/entryPoints/userOperation";
import { verifyingPaymasterArtifact } from "../../src/bindings/paymasters/artifacts";
import {
  decodeVerifyingPaymasterAndData,
  getVerifyingPaymasterHash,
} from "../../src/bindings/paymasters/paymasterAndData";
import type { ChainConfig } from "../../src/config";
import { listSponsorships } from "../../src/storage/sponsorships";
import { anvilKeys, depositOn, newAccountOperation, type Sponsored, startSponsoredChain } from "../contracts/fixtures";
import { type Dapp, startTestApp, type TestApp } from "../helpers/app";
import { INFINITISM } from "../helpers/chainApp";
import { fundedDapp, rpc } from "../helpers/dappSetup";
import { sentFieldsV06, withAnsweredGas } from "../helpers/userOps";

const CHAIN_ID = 31337;
const fundingWallet = privateKeyToAccount(anvilKeys.fundingWallet);

let env: Sponsored | undefined;
const apps: TestApp[] = [];
let withNode: { t: TestApp; dapp: Dapp };
let unreachable: { t: TestApp; dapp: Dapp };
let withoutNode: { t: TestApp; dapp: Dapp };

async function service(chain: Partial<ChainConfig>) {
  assert.ok(env);
  const t = await startTestApp({
    signer: env.serviceSigner,
    chains: new Map([[CHAIN_ID, { chainId: CHAIN_ID, name: "local", ...chain }]]),
  });
  apps.push(t);
  const dapp = await fundedDapp(t, { fundingKey: anvilKeys.fundingWallet, walletDeployment: true });
  return { t, dapp };
}

before(async () => {
  env = await startSponsoredChain({ chainId: CHAIN_ID });
  await depositOn(env, parseEther("1"), anvilKeys.fundingWallet);
  withNode = await service({ rpcUrl: env.anvil.rpcUrl, verifyingPaymaster: env.paymaster });
  unreachable = await service({ rpcUrl: "http://127.0.0.1:1", verifyingPaymaster: env.paymaster });
  withoutNode = await service({ verifyingPaymaster: env.paymaster });
});

after(async () => {
  try {
    for (const t of apps) await t.close();
  } finally {
    await env?.anvil.stop();
  }
});

const BASE_FIELDS: (keyof UserOperation)[] = ["sender", "nonce", "initCode", "callData"];
const calculate = { mode: "SPONSORED", calculateGasLimits: true, sponsorshipInfo: { smartAccountInfo: INFINITISM } };

async function operation(data?: Hex, to = zeroAddress as Hex) {
  assert.ok(env);
  return (await newAccountOperation(env, { to, value: 0n, data })).op;
}

test("without gas fields or fees: the estimate is signed, recorded and returned, fees included", async () => {
  assert.ok(env);
  const op = await operation();
  const reply = await rpc(withNode.t, withNode.dapp, "pm_sponsorUserOperation", [
    sentFieldsV06(op, BASE_FIELDS),
    calculate,
  ]);
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  const result = reply.body.result;
  assert.equal(result.reason, undefined, result.reason);
  assert.ok(result.callGasLimit > 10_000 && result.verificationGasLimit > 100_000, JSON.stringify(result));
  assert.ok(BigInt(result.preVerificationGas) > 40_000n);
  assert.match(result.maxFeePerGas, /^0x[0-9a-f]+$/);
  assert.match(result.maxPriorityFeePerGas, /^0x[0-9a-f]+$/);

  // The signature covers exactly the returned values.
  const signed = withAnsweredGas(op, result);
  const terms = decodeVerifyingPaymasterAndData(result.paymasterAndData);
  const hash = getVerifyingPaymasterHash(signed, { ...terms, chainId: CHAIN_ID });
  assert.equal(
    await recoverMessageAddress({ message: { raw: hash }, signature: terms.signature }),
    env.serviceSigner.address,
  );

  const [record] = await listSponsorships(withNode.t.db, withNode.dapp.paymasterId);
  assert.equal(record?.sponsored, true);
  assert.equal(record?.call_gas_limit, String(result.callGasLimit));
});

test("with the fees and a too-low callGasLimit sent: the fees are kept, the limit raised, nothing extra returned", async () => {
  const op = await operation();
  const reply = await rpc(withNode.t, withNode.dapp, "pm_sponsorUserOperation", [
    { ...sentFieldsV06(op, [...BASE_FIELDS, "maxFeePerGas", "maxPriorityFeePerGas"]), callGasLimit: "0x1" },
    calculate,
  ]);
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  assert.ok(reply.body.result.callGasLimit > 10_000);
  assert.equal(reply.body.result.maxFeePerGas, undefined);
});

test("a call that reverts in estimation: HTTP 400, -32602 and the revert reason", async () => {
  assert.ok(env);
  const withdraw = encodeFunctionData({
    abi: verifyingPaymasterArtifact.abi,
    functionName: "withdrawTo",
    args: [fundingWallet.address, 1n],
  });
  const op = await operation(withdraw, env.paymaster);
  const reply = await rpc(withNode.t, withNode.dapp, "pm_sponsorUserOperation", [
    sentFieldsV06(op, BASE_FIELDS),
    calculate,
  ]);
  assert.equal(reply.status, 400);
  assert.equal(reply.body.error.code, -32602);
  assert.equal(
    reply.body.error.message,
    "Gas estimation failed: the operation's call reverts: VerifyingPaymaster: amount exceeds balance",
  );
  const wrongNonce = { ...sentFieldsV06(op, BASE_FIELDS), nonce: "0x7", callData: "0x" };
  const refused = await rpc(withNode.t, withNode.dapp, "pm_sponsorUserOperation", [wrongNonce, calculate]);
  assert.equal(refused.status, 400);
  assert.match(refused.body.error.message, /^Gas estimation failed: .*AA25 invalid account nonce/);
});

test("an unreachable node: HTTP 503 and -32002 at once, without the node's URL", async () => {
  const op = await operation();
  const started = performance.now();
  const reply = await rpc(unreachable.t, unreachable.dapp, "pm_sponsorUserOperation", [
    sentFieldsV06(op, BASE_FIELDS),
    calculate,
  ]);
  const ms = performance.now() - started;
  assert.equal(reply.status, 503);
  assert.equal(reply.body.error.code, -32002);
  assert.match(reply.body.error.message, /^Gas estimation is unavailable on chain 31337: .*the connection failed/);
  assert.doesNotMatch(reply.body.error.message, /127\.0\.0\.1/);
  assert.ok(ms < 2_000, `${ms} ms`);
  // Nothing was decided, so nothing was recorded.
  assert.deepEqual(await listSponsorships(unreachable.t.db, unreachable.dapp.paymasterId), []);
});

test("a chain without node or bundler: gas must be sent, and when it is, it is signed as given", async () => {
  const op = await operation();
  const missing = await rpc(withoutNode.t, withoutNode.dapp, "pm_sponsorUserOperation", [
    sentFieldsV06(op, [...BASE_FIELDS, "callGasLimit"]),
    calculate,
  ]);
  assert.equal(missing.status, 400);
  assert.equal(missing.body.error.code, -32602);
  assert.equal(
    missing.body.error.message,
    "Chain 31337 (local) cannot estimate gas: it has no RPC or bundler configured; send the gas limits and fees " +
      "(missing: verificationGasLimit, preVerificationGas, maxFeePerGas, maxPriorityFeePerGas)",
  );
  const all: (keyof UserOperation)[] = [
    ...BASE_FIELDS,
    "callGasLimit",
    "verificationGasLimit",
    "preVerificationGas",
    "maxFeePerGas",
    "maxPriorityFeePerGas",
  ];
  const given = await rpc(withoutNode.t, withoutNode.dapp, "pm_sponsorUserOperation", [
    sentFieldsV06(op, all),
    calculate,
  ]);
  assert.equal(given.status, 200, JSON.stringify(given.body));
  assert.equal(given.body.result.callGasLimit, Number(op.callGasLimit));
  assert.equal(given.body.result.preVerificationGas, op.preVerificationGas.toString());
});
