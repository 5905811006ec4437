// PermitTokenPaymasterV07 on the real EntryPoints v0.7, v0.8 and v0.9: a sender's first operation pays in the USDC-like
// token with a permit and no approve anywhere (a contract account signing through ERC-1271; an EOA delegated with
// EIP-7702), the charge is taken before the call so the call cannot dodge it, the refund is exact, a front-run permit
// does no harm, a permit that cannot work is refused in validation, and v0.9 signs apart. The gas of validation and
// postOp, with and without a permit, is read from anvil's call tracer and printed.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type Address, type Hex, keccak256, maxUint256, size, slice } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import {
  decodePermitTokenPaymasterAndData,
  encodeCarriedPermit,
  encodePermitTokenPaymasterAndData,
  getPermitTokenPaymasterHash,
  PERMIT_DEADLINE,
  PERMIT_TOKEN_PAYMASTER_POST_OP_OVERHEAD_GAS,
  permitTokenSettlement,
} from "../../../src/bindings/paymasters/permitTokenPaymasterAndData";
import {
  permitTestTokenArtifact,
  permitTokenPaymasterV07Artifact,
} from "../../../src/bindings/paymasters/tokenArtifacts";
import { PRICE_SOURCE, tokenAmountForWei } from "../../../src/bindings/paymasters/tokenPaymasterAndData";
import { createSigner } from "../../../src/signer/signer";
import { paymasterHookGas } from "../../helpers/paymasterHookGas";
import { anvilKeys } from "../fixtures";
import {
  draftOperation,
  eip7702Sender,
  erc1271Sender,
  eventsOf,
  executeCall,
  failedOp,
  handleOps,
  MARKUP,
  maxCharge,
  type PermitTokenChain,
  type PermitVersion,
  RATE,
  type Sender,
  signByAccount,
  signOperation,
  signPermit,
  startPermitTokenChain,
  TOKENS,
  terms,
  tokenBalance,
  transferCall,
  userOpHashOf,
} from "./permitTokenFixtures";

const AA33 = "AA33 reverted";
const AA34 = "AA34 signature error";
const TARGET: Address = "0x000000000000000000000000000000000000dEaD";
const STRANGER = privateKeyToAccount(anvilKeys.stranger).address;

/** A chain per EntryPoint version, started once for the file's tests of that version. */
function chainOf(version: PermitVersion): () => PermitTokenChain {
  let env: PermitTokenChain | undefined;
  before(async () => {
    env = await startPermitTokenChain(version);
  });
  after(() => env?.anvil.stop());
  return () => {
    assert.ok(env, `the v${version} chain did not start`);
    return env;
  };
}

/**
 * Sends one operation of `sender` running `call` (given the maximum charge, for a call that must know it), paid with a
 * permit of `permitTimesMax` times the maximum charge (none when undefined), and checks the money: the prefund was the
 * signed maximum, the charge is within it and is postOp's arithmetic on the EntryPoint's figures.
 */
async function payWithPermit(
  env: PermitTokenChain,
  sender: Sender,
  call: Hex | ((max: bigint) => Hex),
  permitTimesMax: bigint | undefined,
  parallel = false,
) {
  const probe = await draftOperation(env, sender, "0x");
  const callData = typeof call === "function" ? call(maxCharge(probe)) : call;
  const draft = await draftOperation(env, sender, callData);
  const max = maxCharge(draft);
  const permit = permitTimesMax === undefined ? undefined : await signPermit(env, sender, max * permitTimesMax);
  const op = await signOperation(env, sender, draft, await terms(env, { ...(permit ? { permit } : {}), parallel }));
  const senderBefore = await tokenBalance(env, sender.address);
  const paymasterBefore = await tokenBalance(env, env.paymaster);
  const receipt = await handleOps(env, [op], [sender]);
  const { charged, operations } = eventsOf(receipt);
  const [operation] = operations;
  const [event] = charged;
  assert.ok(operation && event && operations.length === 1, "the operation ran and our paymaster charged it");
  assert.equal(event.userOpHash, await userOpHashOf(env, op));
  assert.equal(event.charge + event.refund, max, "the prefund was the signed maximum");
  assert.ok(event.charge > 0n && event.charge <= max, "the charge is within the quote");
  const hooks = await paymasterHookGas(env.publicClient, receipt.transactionHash, env.paymaster);
  const fee = operation.args.actualGasCost / operation.args.actualGasUsed;
  assert.deepEqual(
    { charge: event.charge, refund: event.refund },
    permitTokenSettlement(event.gasCost - PERMIT_TOKEN_PAYMASTER_POST_OP_OVERHEAD_GAS * fee, fee, {
      exchangeRate: RATE,
      priceMarkup: MARKUP,
      prefund: max,
    }),
    "the service's arithmetic gives the contract's charge and refund",
  );
  // What the EntryPoint took after postOp's actualGasCost: postOp, its accounting, the unused-gas penalty.
  const after =
    (operation.args.actualGasCost - (event.gasCost - PERMIT_TOKEN_PAYMASTER_POST_OP_OVERHEAD_GAS * fee)) / fee;
  assert.ok(
    after <= PERMIT_TOKEN_PAYMASTER_POST_OP_OVERHEAD_GAS,
    `the overhead covers the ${after} gas taken after postOp`,
  );
  return { op, max, receipt, operation, event, hooks, senderBefore, paymasterBefore, after };
}

type Paid = Awaited<ReturnType<typeof payWithPermit>>;

/** The figures of one paid operation: the hooks' gas, what the EntryPoint charged after postOp, the refund's share. */
function report(t: { diagnostic(message: string): void }, label: string, paid: Paid) {
  const refunded = ((Number(paid.event.refund) / Number(paid.max)) * 100).toFixed(1);
  t.diagnostic(
    `${label}: validatePaymasterUserOp ${paid.hooks.validation} gas, postOp ${paid.hooks.postOp} gas, ${paid.after} gas ` +
      `charged after postOp's actualGasCost; charge ${paid.event.charge}, refund ${paid.event.refund} of ` +
      `${paid.max} (${refunded} % refunded)`,
  );
}

describe("EntryPoint v0.7", () => {
  const env = chainOf("0.7");

  test("the service's hash and layout are the contract's, with and without a permit and with a v0.9 suffix", async () => {
    const sender = await erc1271Sender(env(), 0n);
    const draft = await draftOperation(env(), sender, executeCall(TARGET));
    const permit = await signPermit(env(), sender, TOKENS(5n));
    const contract = { address: env().paymaster, abi: permitTokenPaymasterV07Artifact.abi } as const;
    for (const carried of [undefined, permit]) {
      const quote = await terms(env(), carried ? { permit: carried } : {});
      const context = { ...quote, ...draft.limits, chainId: env().anvil.chainId, paymaster: env().paymaster };
      const signature: Hex = `0x${"ab".repeat(64)}1b`;
      // The contract reads the two paymaster gas limits from paymasterAndData.
      const op = { ...draft.op, paymasterAndData: encodePermitTokenPaymasterAndData({ ...context, signature }) };
      const permitBytes = carried ? encodeCarriedPermit(carried) : "0x";
      const onChain = await env().publicClient.readContract({
        ...contract,
        functionName: "getHash",
        args: [op, quote, keccak256(permitBytes)],
      });
      assert.equal(getPermitTokenPaymasterHash(draft.op, context), onChain);
      for (const encoded of [
        encodePermitTokenPaymasterAndData({ ...context, signature }),
        encodePermitTokenPaymasterAndData({ ...context, signature: "0x", paymasterSignature: signature }),
      ]) {
        const [parsedTerms, parsedPermit, parsedSignature, parsedSuffix] = await env().publicClient.readContract({
          ...contract,
          functionName: "parsePaymasterAndData",
          args: [encoded],
        });
        const decoded = decodePermitTokenPaymasterAndData(encoded);
        assert.equal(parsedTerms.exchangeRate, decoded.exchangeRate);
        assert.equal(parsedTerms.validUntil, decoded.validUntil);
        assert.equal(parsedTerms.feeToken, decoded.feeToken);
        assert.equal(parsedPermit, carried ? slice(encoded, 247, 247 + 32 + size(carried.signature)) : "0x");
        assert.equal(decoded.permit?.value, carried?.value);
        assert.equal(decoded.permit?.signature, carried?.signature.toLowerCase());
        assert.equal(parsedSignature, decoded.signature);
        assert.equal(parsedSuffix, decoded.paymasterSignature ?? "0x");
      }
    }
    const [overhead, deadline, amount] = await Promise.all([
      env().publicClient.readContract({ ...contract, functionName: "POST_OP_OVERHEAD_GAS" }),
      env().publicClient.readContract({ ...contract, functionName: "PERMIT_DEADLINE" }),
      env().publicClient.readContract({
        ...contract,
        functionName: "tokenAmount",
        args: [123_456_789_012_345n, RATE, 1_234_567],
      }),
    ]);
    assert.equal(overhead, PERMIT_TOKEN_PAYMASTER_POST_OP_OVERHEAD_GAS);
    assert.equal(deadline, PERMIT_DEADLINE);
    assert.equal(deadline, maxUint256);
    assert.equal(amount, tokenAmountForWei(123_456_789_012_345n, RATE, 1_234_567));
  });

  test("a fresh ERC-1271 account's first operation pays with its permit and no approve; a later one needs none", async (t) => {
    const sender = await erc1271Sender(env(), TOKENS(100n));
    // Twice the maximum: the allowance left after the first charge covers a second operation.
    const first = await payWithPermit(env(), sender, executeCall(TARGET), 2n);
    assert.equal(first.operation.args.success, true);
    assert.ok(
      await env().publicClient.getCode({ address: sender.address }),
      "the first operation deployed the account",
    );
    assert.equal(
      await tokenBalance(env(), sender.address),
      first.senderBefore - first.event.charge,
      "exactly the charge",
    );
    assert.equal(await tokenBalance(env(), env().paymaster), first.paymasterBefore + first.event.charge);
    const second = await payWithPermit(env(), sender, executeCall(TARGET), undefined);
    assert.equal(second.operation.args.success, true);
    report(t, "v0.7, first operation, ERC-1271 permit, first charge of the token", first);
    report(t, "v0.7, later operation, no permit (the allowance covers it)", second);
  });

  test("an operation whose call sends every token away is still mined, and the paymaster keeps its charge", async (t) => {
    const held = TOKENS(50n);
    const sender = await erc1271Sender(env(), held);
    const strangerBefore = await tokenBalance(env(), STRANGER);
    // The call sends away all the sender holds once the prefund has left: with a charge in postOp, nothing would be left.
    const paid = await payWithPermit(env(), sender, (max) => transferCall(env(), STRANGER, held - max), 1n);
    assert.equal(paid.operation.args.success, true, "the call ran: the charge was taken before it");
    assert.equal(await tokenBalance(env(), STRANGER), strangerBefore + held - paid.max);
    assert.equal(await tokenBalance(env(), env().paymaster), paid.paymasterBefore + paid.event.charge);
    assert.equal(await tokenBalance(env(), sender.address), paid.event.refund, "the refund came back after the call");
    report(t, "v0.7, a call that sends every token away, permit, not the first charge", paid);
  });

  test("a permit someone else submitted to the token first does not stop the operation", async () => {
    const sender = await erc1271Sender(env(), TOKENS(100n));
    // Deployed by a first operation: a counterfactual account's ERC-1271 permit cannot run before it exists.
    await payWithPermit(env(), sender, executeCall(TARGET), 1n);
    const draft = await draftOperation(env(), sender, executeCall(TARGET));
    const permit = await signPermit(env(), sender, maxCharge(draft));
    // Seen in the mempool and sent to the token directly: the nonce is used and the allowance set.
    const frontRun = await env()
      .wallet(anvilKeys.stranger)
      .writeContract({
        address: env().token,
        abi: permitTestTokenArtifact.abi,
        functionName: "permit",
        args: [sender.address, env().paymaster, permit.value, PERMIT_DEADLINE, permit.signature],
      });
    await env().publicClient.waitForTransactionReceipt({ hash: frontRun });
    const op = await signOperation(env(), sender, draft, await terms(env(), { permit }));
    const { operations, charged } = eventsOf(await handleOps(env(), [op], [sender]));
    assert.equal(operations[0]?.args.success, true);
    assert.equal(charged.length, 1);
  });

  test("a permit that cannot work is refused in validation: another spender, a value below the maximum, a used nonce", async () => {
    const sender = await erc1271Sender(env(), TOKENS(100n));
    const draft = await draftOperation(env(), sender, executeCall(TARGET));
    const max = maxCharge(draft);
    const used = await signPermit(env(), sender, max);
    await payWithPermit(env(), sender, executeCall(TARGET), 1n); // uses nonce 0 and the whole allowance
    const next = await draftOperation(env(), sender, executeCall(TARGET));
    const cases = {
      "another spender": await signPermit(env(), sender, max, { spender: STRANGER }),
      "a value below the maximum": await signPermit(env(), sender, maxCharge(next) - 1n),
      "a used nonce": used,
    };
    for (const [name, permit] of Object.entries(cases)) {
      const op = await signOperation(env(), sender, next, await terms(env(), { permit }));
      const failure = await failedOp(env(), [op], [sender]);
      assert.equal(failure.errorName, "FailedOpWithRevert", name);
      assert.equal(failure.args[1], AA33, name);
    }
  });

  test("the service's signature covers the permit: one changed after signing fails AA34", async () => {
    const sender = await erc1271Sender(env(), TOKENS(100n));
    const draft = await draftOperation(env(), sender, executeCall(TARGET));
    const permit = await signPermit(env(), sender, maxCharge(draft) * 2n);
    const quote = await terms(env(), { permit });
    const op = await signOperation(env(), sender, draft, quote);
    const other = await signPermit(env(), sender, maxCharge(draft) * 3n);
    const context = { ...quote, ...draft.limits, chainId: env().anvil.chainId, paymaster: env().paymaster };
    const { signature } = decodePermitTokenPaymasterAndData(op.paymasterAndData);
    // The account signs again, so that only the service's signature can fail.
    const swapped = await signByAccount(env(), sender, {
      ...op,
      paymasterAndData: encodePermitTokenPaymasterAndData({ ...context, permit: other, signature }),
    });
    assert.deepEqual(await failedOp(env(), [swapped], [sender]), { errorName: "FailedOp", args: [0n, AA34] });
    const wrongKey = await signOperation(env(), sender, draft, quote, createSigner(generatePrivateKey()));
    assert.deepEqual(await failedOp(env(), [wrongKey], [sender]), { errorName: "FailedOp", args: [0n, AA34] });
  });

  test("the oracle's price works the same way, charged at the rate validation read", async () => {
    const sender = await erc1271Sender(env(), TOKENS(100n));
    const draft = await draftOperation(env(), sender, executeCall(TARGET));
    const permit = await signPermit(env(), sender, maxCharge(draft));
    const quote = await terms(env(), {
      permit,
      priceSource: PRICE_SOURCE.oracle,
      oracleAggregator: env().aggregator,
      exchangeRate: 0n,
    });
    const receipt = await handleOps(env(), [await signOperation(env(), sender, draft, quote)], [sender]);
    const [event] = eventsOf(receipt).charged;
    assert.equal(event?.exchangeRate, RATE, "the aggregator's 3,000 per ether, in base units");
    assert.equal((event?.charge ?? 0n) + (event?.refund ?? 0n), maxCharge(draft));
  });
});

describe("EntryPoint v0.8", () => {
  const env = chainOf("0.8");

  test("an EOA delegated with EIP-7702 in the bundle's transaction pays its first operation with its owner's permit", async (t) => {
    const sender = await eip7702Sender(env(), TOKENS(100n));
    const paid = await payWithPermit(env(), sender, executeCall(TARGET), 1n);
    assert.equal(paid.operation.args.success, true);
    assert.equal(await tokenBalance(env(), sender.address), paid.senderBefore - paid.event.charge);
    assert.equal(await env().publicClient.getBalance({ address: sender.address }), 0n, "no ether: the paymaster paid");
    report(t, "v0.8, EIP-7702 first operation with the owner's permit", paid);
  });
});

describe("EntryPoint v0.9", () => {
  const env = chainOf("0.9");

  for (const parallel of [true, false]) {
    test(`an operation signed ${parallel ? "in parallel (the signature apart)" : "in sequence"} with a permit is mined`, async (t) => {
      const sender = await erc1271Sender(env(), TOKENS(100n));
      const paid = await payWithPermit(env(), sender, executeCall(TARGET), 1n, parallel);
      assert.equal(paid.operation.args.success, true);
      assert.equal(
        decodePermitTokenPaymasterAndData(paid.op.paymasterAndData).paymasterSignature !== undefined,
        parallel,
      );
      report(t, `v0.9, ${parallel ? "parallel" : "sequential"} signing with a permit`, paid);
    });
  }
});
