// Validity windows in block numbers, end to end on the local chain with the real EntryPoint v0.9: a paymaster sets
// `validityBlocks` through PATCH paymasterParameters; its v0.9 signatures then carry validAfter and validUntil as
// block numbers (bit 47 set on both), from a few blocks before the chain's head to `validityBlocks` after it. Such an
// operation is mined by handleOps inside its window and refused by the EntryPoint (AA37, its block range) after its last block; the
// ledger holds it in seconds all the while. Parallel signing carries the same window (mined too), while its
// commitment lives in seconds. The same paymaster's v0.8 signatures stay in seconds; null goes back to seconds on v0.9 too; a bad number is a 400 naming `blocks`.
import assert from "node:assert/strict";
import { before, describe, test } from "node:test";
import { type Address, decodeAbiParameters, type Hex, isAddressEqual, numberToHex, parseEventLogs } from "viem";
import {
  formatUserOperationRequest,
  toPackedUserOperation,
  toSimple7702SmartAccount,
  type UserOperation,
} from "viem/account-abstraction";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { entryPointV07Abi } from "../../src/bindings/entryPoints/entryPointV07";
import { MAX_VALIDITY_BLOCKS } from "../../src/schemas/management/validityBlocksLimit";
import { BLOCK_NUMBER_FLAG, BLOCK_SKEW } from "../../src/sponsorship/blockWindow";
import { listSponsorships } from "../../src/storage/sponsorships";
import { anvilKeys } from "../contracts/fixtures";
import { confirm } from "../contracts/v07/localStacks";
import type { Dapp } from "../helpers/app";
import { chainDapp, TARGET } from "../helpers/chainApp";
import { rpc } from "../helpers/dappSetup";
import { freshOperationV07 } from "../helpers/freshOperationV07";
import { stacksAppFile } from "../helpers/stacksAppFile";
import { withPaymasterFields } from "../helpers/userOps";

const CHAIN_ID = 31337;
const BLOCKS = 5;

let dapp: Dapp;
const { env, t } = stacksAppFile({ deposits: ["0.8", "0.9"] }, async ({ t }) => {
  dapp = await chainDapp(t);
});

const patch = (body: Record<string, unknown>) =>
  t().call("PATCH", "paymasterParameters", {
    token: dapp.token,
    apiKey: dapp.apiKey,
    body: { paymasterId: dapp.paymasterId, type: "validityBlocks", ...body },
  });

/** A fresh SimpleAccount's first operation at `version`'s EntryPoint (factory and a call to TARGET), unsigned. */
async function freshOperation(version: "0.8" | "0.9") {
  const stack = env().chain.info.entryPoints[version];
  const fresh = await freshOperationV07(env().publicClient, version, stack, { calls: [{ to: TARGET, value: 0n }] });
  const op: UserOperation<"0.8"> = {
    ...fresh.op,
    callGasLimit: 100_000n,
    verificationGasLimit: 500_000n,
    preVerificationGas: 60_000n,
    signature: "0x",
  };
  return { account: fresh.account, op, entryPoint: stack.entryPoint };
}

/** pm_getPaymasterData for the operation; the answer's fields put on it, and its window as signed. */
async function sponsored(version: "0.8" | "0.9", context: Record<string, unknown> = {}) {
  const { account, op, entryPoint } = await freshOperation(version);
  const reply = await rpc(t(), dapp, "pm_getPaymasterData", [
    formatUserOperationRequest(op),
    entryPoint,
    numberToHex(CHAIN_ID),
    context,
  ]);
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  assert.ok(reply.body.result, JSON.stringify(reply.body));
  const result = reply.body.result as Record<string, Hex>;
  const withFields: UserOperation<"0.8"> = withPaymasterFields(op, result);
  return { account, op: withFields, entryPoint, window: windowOf(withFields.paymasterData as Hex), result };
}

/** Our verifying paymaster's data is abi.encode(paymasterId, validUntil, validAfter, signature). */
function windowOf(paymasterData: Hex) {
  const [, validUntil, validAfter] = decodeAbiParameters(
    [{ type: "address" }, { type: "uint48" }, { type: "uint48" }, { type: "bytes" }],
    paymasterData,
  );
  return { validUntil, validAfter };
}

/** The account signs last; a plain EOA sends handleOps (v0.9 takes bundles from EOAs only). */
async function handleOps(entryPoint: Address, op: UserOperation<"0.8">, signature: Hex) {
  const packed = toPackedUserOperation({ ...op, signature });
  return env()
    .wallet(anvilKeys.bundler)
    .writeContract({
      address: entryPoint,
      abi: entryPointV07Abi,
      functionName: "handleOps",
      args: [[packed], privateKeyToAccount(anvilKeys.bundler).address],
    });
}

const head = () => env().publicClient.getBlockNumber({ cacheTime: 0 });

describe("PATCH paymasterParameters {type: validityBlocks}", () => {
  test("a bad number is a 400 naming blocks, and changes nothing", async () => {
    const problem = `blocks must be a whole number of blocks from 1 to ${MAX_VALIDITY_BLOCKS}, or null for a window in seconds`;
    for (const blocks of [0, -3, MAX_VALIDITY_BLOCKS + 1, 2.5, "10", true]) {
      const reply = await patch({ blocks });
      assert.equal(reply.status, 400, `${blocks}: ${JSON.stringify(reply.body)}`);
      assert.equal(reply.body.message, problem, String(blocks));
    }
    const missing = await patch({});
    assert.equal(missing.status, 400);
    assert.equal(missing.body.message, "blocks is required");
    const listed = await t().call("GET", "paymasterParameters", { token: dapp.token });
    const mine = (listed.body.data as { paymasterId: string; validityBlocks: unknown }[]).find(
      (paymaster) => paymaster.paymasterId === dapp.paymasterId,
    );
    assert.equal(mine?.validityBlocks, null);
  });

  test("another paymaster's id is not found", async () => {
    const other = await t().dapp();
    const reply = await t().call("PATCH", "paymasterParameters", {
      token: dapp.token,
      apiKey: dapp.apiKey,
      body: { paymasterId: other.paymasterId, type: "validityBlocks", blocks: 10 },
    });
    assert.equal(reply.status, 404, JSON.stringify(reply.body));
  });
});

describe("a paymaster whose signatures are valid for a number of blocks", () => {
  before(async () => {
    const reply = await patch({ blocks: BLOCKS });
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    assert.equal((reply.body.data as { validityBlocks: number }).validityBlocks, BLOCKS);
  });

  test("v0.9: the window is in blocks, from BLOCK_SKEW before the head to BLOCKS after it, and the operation is mined", async () => {
    const before = await head();
    const { account, op, entryPoint, window } = await sponsored("0.9");
    const after = await head();
    const flag = BigInt(BLOCK_NUMBER_FLAG);
    assert.ok(window.validUntil >= flag && window.validAfter >= flag, "bit 47 set on both ends");
    const last = BigInt(window.validUntil) - flag;
    assert.ok(last >= before + BigInt(BLOCKS) && last <= after + BigInt(BLOCKS), `last block ${last}`);
    assert.equal(BigInt(window.validAfter) - flag, last - BigInt(BLOCKS) - BigInt(BLOCK_SKEW));

    const nowSeconds = Math.floor(Date.now() / 1000);
    const [record] = (await listSponsorships(t().db, dapp.paymasterId)).filter(
      (row) => row.sender === op.sender.toLowerCase(),
    );
    assert.ok(record?.sponsored, JSON.stringify(record));
    // The ledger holds it in seconds: at least as long as a window in seconds would have been (300 s by default).
    assert.ok(Number(record.valid_until) >= nowSeconds + 290, `held until ${record.valid_until}`);
    assert.ok(Number(record.valid_until) < BLOCK_NUMBER_FLAG);

    const receipt = await confirm(env(), handleOps(entryPoint, op, await account.signUserOperation(op)));
    assert.ok(receipt.blockNumber <= last, `mined in block ${receipt.blockNumber}, window ends at ${last}`);
    const [event] = parseEventLogs({ abi: entryPointV07Abi, logs: receipt.logs, eventName: "UserOperationEvent" });
    assert.ok(event && isAddressEqual(event.args.sender, op.sender));
    assert.equal(event.args.success, true);
    assert.ok(isAddressEqual(event.args.paymaster, env().chain.info.entryPoints["0.9"].verifyingPaymaster));
  });

  test("v0.9: after its last block the EntryPoint refuses it (AA37), though its seconds would still hold", async () => {
    const { account, op, entryPoint, window } = await sponsored("0.9");
    const last = BigInt(window.validUntil) - BigInt(BLOCK_NUMBER_FLAG);
    const toMine = last - (await head()) + 1n;
    await env().publicClient.request({ method: "anvil_mine" as never, params: [numberToHex(toMine)] as never });
    assert.equal(await head(), last + 1n);
    await assert.rejects(
      handleOps(entryPoint, op, await account.signUserOperation(op)),
      /AA37 paymaster inval block range/,
    );
  });

  test("v0.8 reads no block numbers: the same paymaster signs its window in seconds", async () => {
    const { window } = await sponsored("0.8");
    const nowSeconds = Math.floor(Date.now() / 1000);
    assert.ok(window.validUntil < BLOCK_NUMBER_FLAG && window.validAfter < BLOCK_NUMBER_FLAG);
    assert.ok(Math.abs(window.validUntil - (nowSeconds + 300)) <= 5, `validUntil ${window.validUntil}`);
  });

  test("v0.9 parallel signing: the committed window is in blocks, the commitment lives in seconds", async () => {
    const { op, window, result } = await sponsored("0.9", { signingPhase: "commit" });
    assert.ok(result.paymasterSignature, "commit answers a placeholder paymasterSignature");
    assert.ok(window.validUntil >= BLOCK_NUMBER_FLAG && window.validAfter >= BLOCK_NUMBER_FLAG);
    const [kept] = await t().db.query<{ valid_until: string }>(
      "SELECT valid_until::text AS valid_until FROM signature_commitments WHERE sender = $1",
      [op.sender.toLowerCase()],
    );
    const nowSeconds = Math.floor(Date.now() / 1000);
    assert.ok(kept, "the commitment is kept");
    assert.ok(Number(kept.valid_until) >= nowSeconds + 290 && Number(kept.valid_until) < nowSeconds + 400);
  });

  test("v0.9 parallel signing in blocks: commit, the account signs, finalize, mined by handleOps", async () => {
    const stack = env().chain.info.entryPoints["0.9"];
    const owner = privateKeyToAccount(generatePrivateKey());
    const account = await toSimple7702SmartAccount({ client: env().publicClient, owner, entryPoint: "0.9" });
    const authorization = await owner.signAuthorization({
      address: stack.simple7702Account as Address,
      chainId: env().viemChain.id,
      nonce: 0,
    });
    const block = await env().publicClient.getBlock();
    const op: UserOperation<"0.9"> = {
      sender: owner.address,
      nonce: 0n,
      // EntryPoint v0.8 on: the 0x7702 marker makes the hash cover the delegate the authorization names.
      factory: "0x7702",
      factoryData: "0x",
      callData: await account.encodeCalls([{ to: TARGET, value: 0n }]),
      callGasLimit: 100_000n,
      verificationGasLimit: 200_000n,
      preVerificationGas: 60_000n,
      maxPriorityFeePerGas: 1_000_000_000n,
      maxFeePerGas: 2n * (block.baseFeePerGas ?? 0n) + 1_000_000_000n,
      signature: "0x",
      authorization,
    };
    const ask = (userOp: UserOperation<"0.9">, signingPhase: "commit" | "finalize") =>
      rpc(t(), dapp, "pm_getPaymasterData", [
        formatUserOperationRequest(userOp),
        stack.entryPoint,
        numberToHex(CHAIN_ID),
        { signingPhase },
      ]);
    const commit = await ask(op, "commit");
    assert.ok(commit.body.result, JSON.stringify(commit.body));
    const withFields: UserOperation<"0.9"> = withPaymasterFields(op, commit.body.result as Record<string, Hex>);
    const window = windowOf(withFields.paymasterData as Hex);
    assert.ok(window.validUntil >= BLOCK_NUMBER_FLAG && window.validAfter >= BLOCK_NUMBER_FLAG, "a window in blocks");
    const signature = await account.signUserOperation(withFields);
    const finalize = await ask({ ...withFields, signature }, "finalize");
    assert.ok(finalize.body.result, JSON.stringify(finalize.body));
    const paymasterSignature = (finalize.body.result as Record<string, Hex>).paymasterSignature as Hex;
    const packed = toPackedUserOperation({ ...withFields, signature, paymasterSignature });
    const receipt = await confirm(
      env(),
      env()
        .wallet(anvilKeys.bundler)
        .writeContract({
          address: stack.entryPoint,
          abi: entryPointV07Abi,
          functionName: "handleOps",
          args: [[packed], privateKeyToAccount(anvilKeys.bundler).address],
          authorizationList: [authorization],
        }),
    );
    assert.ok(receipt.blockNumber <= BigInt(window.validUntil - BLOCK_NUMBER_FLAG), "mined inside the window");
    const [event] = parseEventLogs({ abi: entryPointV07Abi, logs: receipt.logs, eventName: "UserOperationEvent" });
    assert.ok(event && isAddressEqual(event.args.sender, owner.address));
    assert.equal(event.args.success, true);
    assert.ok(isAddressEqual(event.args.paymaster, stack.verifyingPaymaster));
  });

  test("null goes back to windows in seconds on v0.9", async () => {
    const reply = await patch({ blocks: null });
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    assert.equal((reply.body.data as { validityBlocks: unknown }).validityBlocks, null);
    const { window } = await sponsored("0.9");
    assert.ok(window.validUntil < BLOCK_NUMBER_FLAG && window.validAfter < BLOCK_NUMBER_FLAG);
  });
});
