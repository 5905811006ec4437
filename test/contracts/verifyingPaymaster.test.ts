// The VerifyingPaymaster against the real EntryPoint v0.6 on anvil, with user operations built and signed by the
// service's own encoder and signer. Each test runs from the same snapshot, so none sees another's deposits.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import {
  type Address,
  concat,
  encodeAbiParameters,
  type Hex,
  parseEther,
  parseEventLogs,
  slice,
  zeroAddress,
} from "viem";
import { generatePrivateKey, privateKeyToAccount, sign } from "viem/accounts";
import { ENTRY_POINT_V06_ADDRESS, entryPointAbi } from "../../src/bindings/entryPoints/entryPoint";
import type { UserOperation } from "../../src/bindings/entryPoints/userOperation";
import { verifyingPaymasterArtifact } from "../../src/bindings/paymasters/artifacts";
import { getVerifyingPaymasterHash } from "../../src/bindings/paymasters/paymasterAndData";
import { createSigner } from "../../src/signer/signer";
import { revertEachTest } from "../helpers/revertEachTest";
import {
  anvilKeys,
  failedOpOf,
  handleOps,
  latestTimestamp,
  newAccountOperation,
  reservedFor,
  revertOf,
  type Sponsored,
  type SponsorOptions,
  signByAccount,
  simulateBundle,
  sponsor,
  startSponsoredChain,
} from "./fixtures";

const AA34 = "AA34 signature error";
const AA32 = "AA32 paymaster expired or not due";
const fundingWallet = privateKeyToAccount(anvilKeys.fundingWallet).address;
const otherFundingWallet = privateKeyToAccount(anvilKeys.otherFundingWallet).address;

let env: Sponsored;
let overheadGas: bigint;

before(async () => {
  // Not anvil's default 31337, so a chain id the contract took from anywhere but block.chainid would show.
  env = await startSponsoredChain({ chainId: 4337 });
  assert.equal(await env.publicClient.getChainId(), 4337);
  overheadGas = await env.publicClient.readContract({ ...paymaster(), functionName: "POST_OP_OVERHEAD_GAS" });
});
after(() => env?.anvil.stop());
revertEachTest(() => env.testClient);

function paymaster() {
  return { address: env.paymaster, abi: verifyingPaymasterArtifact.abi } as const;
}

function balanceOf(paymasterId: Address): Promise<bigint> {
  return env.publicClient.readContract({ ...paymaster(), functionName: "getBalance", args: [paymasterId] });
}

function entryPointDeposit(): Promise<bigint> {
  return env.publicClient.readContract({
    address: ENTRY_POINT_V06_ADDRESS,
    abi: entryPointAbi,
    functionName: "balanceOf",
    args: [env.paymaster],
  });
}

async function depositFor(paymasterId: Address, value: bigint, from: Hex = anvilKeys.fundingWallet) {
  const hash = await env
    .wallet(from)
    .writeContract({ ...paymaster(), functionName: "depositFor", args: [paymasterId], value });
  return env.publicClient.waitForTransactionReceipt({ hash });
}

/** Terms the service would give: valid from a minute ago to five minutes ahead of the chain's clock. */
async function terms(overrides: Partial<SponsorOptions> = {}): Promise<SponsorOptions> {
  const now = await latestTimestamp(env);
  return {
    paymaster: env.paymaster,
    paymasterId: fundingWallet,
    signer: env.serviceSigner,
    validUntil: now + 300,
    validAfter: now - 60,
    chainId: env.anvil.chainId,
    ...overrides,
  };
}

/** A sponsored first operation of a fresh account that sends `value` of its own ether to a fresh address. */
async function sponsoredTransfer(options: { value?: bigint; sponsorship?: Partial<SponsorOptions> } = {}) {
  const recipient = privateKeyToAccount(generatePrivateKey()).address;
  const { op, owner } = await newAccountOperation(env, { to: recipient, value: options.value ?? 0n });
  const sponsored = await sponsor(op, await terms(options.sponsorship));
  return { op: await signByAccount(env, sponsored, owner), owner, recipient };
}

/** Re-signs by the account after a change, so only the paymaster's check can object. */
async function alter(
  build: Awaited<ReturnType<typeof sponsoredTransfer>>,
  change: (op: UserOperation) => UserOperation,
): Promise<UserOperation> {
  return signByAccount(env, change(build.op), build.owner);
}

test("a sponsored operation deploys the account, runs its call and is charged to the dApp's deposit", async (t) => {
  const deposited = await depositFor(fundingWallet, parseEther("1"));
  const [depositEvent] = parseEventLogs({ abi: paymaster().abi, logs: deposited.logs, eventName: "GasDeposited" });
  assert.deepEqual(depositEvent?.args, { paymasterId: fundingWallet, from: fundingWallet, amount: parseEther("1") });
  assert.equal(await balanceOf(fundingWallet), parseEther("1"));

  const { op, recipient } = await sponsoredTransfer({ value: parseEther("0.1") });
  await env.testClient.setBalance({ address: op.sender, value: parseEther("1") });
  const balanceBefore = await balanceOf(fundingWallet);
  const depositBefore = await entryPointDeposit();

  const receipt = await handleOps(env, [op]);
  assert.equal(receipt.status, "success");

  const [event] = parseEventLogs({ abi: entryPointAbi, logs: receipt.logs, eventName: "UserOperationEvent" });
  assert.ok(event);
  assert.equal(event.args.success, true);
  assert.equal(event.args.sender, op.sender);
  assert.equal(event.args.paymaster, env.paymaster);
  const [deployment] = parseEventLogs({ abi: entryPointAbi, logs: receipt.logs, eventName: "AccountDeployed" });
  assert.equal(deployment?.args.sender, op.sender);

  // The call ran, and the account paid for nothing but the value it sent.
  assert.equal(await env.publicClient.getBalance({ address: recipient }), parseEther("0.1"));
  assert.equal(await env.publicClient.getBalance({ address: op.sender }), parseEther("0.9"));

  // The EntryPoint took exactly the operation's cost from the paymaster's deposit...
  const { actualGasCost, actualGasUsed } = event.args;
  assert.equal(depositBefore - (await entryPointDeposit()), actualGasCost);
  // ...at base fee + tip, which is what postOp must price its overhead at.
  const block = await env.publicClient.getBlock({ blockNumber: receipt.blockNumber });
  const gasPrice = actualGasCost / actualGasUsed;
  assert.equal(actualGasCost % actualGasUsed, 0n);
  assert.equal(gasPrice, (block.baseFeePerGas ?? 0n) + op.maxPriorityFeePerGas);
  assert.ok(gasPrice < op.maxFeePerGas);

  // ...and the dApp was charged the cost before postOp plus the fixed overhead, logged for settlement.
  const [charged] = parseEventLogs({ abi: paymaster().abi, logs: receipt.logs, eventName: "GasCharged" });
  assert.ok(charged);
  assert.equal(charged.args.paymasterId, fundingWallet);
  assert.equal(charged.args.userOpHash, event.args.userOpHash);
  const charge = charged.args.charge;
  assert.equal(balanceBefore - (await balanceOf(fundingWallet)), charge);
  // The overhead covers the gas spent in and after postOp, without charging more than the fixed overhead on top.
  assert.ok(charge >= actualGasCost, `charge ${charge} below what the EntryPoint took, ${actualGasCost}`);
  assert.ok(charge - actualGasCost < overheadGas * gasPrice);
  // What the dApps are owed stays covered by what the EntryPoint holds for the paymaster.
  assert.ok((await entryPointDeposit()) >= (await balanceOf(fundingWallet)));
  const postOpAndAfter = actualGasUsed - (charge - overheadGas * gasPrice) / gasPrice;
  t.diagnostic(`gas in and after postOp: ${postOpAndAfter} (overhead charged: ${overheadGas}); charge ${charge} wei`);
});

test("an operation whose call reverts is still charged", async (t) => {
  await depositFor(fundingWallet, parseEther("1"));
  // The new account holds no ether, so sending one makes its call revert (after validation, so gas is spent).
  const { op } = await sponsoredTransfer({ value: parseEther("1") });
  const balanceBefore = await balanceOf(fundingWallet);
  const receipt = await handleOps(env, [op]);
  const [event] = parseEventLogs({ abi: entryPointAbi, logs: receipt.logs, eventName: "UserOperationEvent" });
  assert.equal(event?.args.success, false);
  const [charged] = parseEventLogs({ abi: paymaster().abi, logs: receipt.logs, eventName: "GasCharged" });
  assert.ok(charged && event);
  assert.equal(balanceBefore - (await balanceOf(fundingWallet)), charged.args.charge);
  // Same rule as on success: never below what the EntryPoint took, never more than the overhead above it.
  const gasPrice = event.args.actualGasCost / event.args.actualGasUsed;
  assert.ok(charged.args.charge >= event.args.actualGasCost);
  assert.ok(charged.args.charge - event.args.actualGasCost < overheadGas * gasPrice);
  const postOpAndAfter = event.args.actualGasUsed - (charged.args.charge - overheadGas * gasPrice) / gasPrice;
  t.diagnostic(`gas in and after postOp (call reverted): ${postOpAndAfter}`);
});

test("validation requires maxCost plus the overhead at maxFeePerGas, to the wei", async () => {
  const { op } = await sponsoredTransfer();
  const needed = reservedFor(op, overheadGas);
  await depositFor(fundingWallet, needed - 1n);
  assert.deepEqual(await failedOpOf(env, [op]), {
    errorName: "FailedOp",
    args: [0n, "AA33 reverted: VerifyingPaymaster: paymasterId deposit too low"],
  });
  await depositFor(fundingWallet, 1n);
  const receipt = await handleOps(env, [op]);
  const [event] = parseEventLogs({ abi: entryPointAbi, logs: receipt.logs, eventName: "UserOperationEvent" });
  assert.equal(event?.args.success, true);
});

test("another dApp's deposit never pays: the shared EntryPoint deposit is not enough", async () => {
  await depositFor(otherFundingWallet, parseEther("5"), anvilKeys.otherFundingWallet);
  await depositFor(fundingWallet, parseEther("0.000001"));
  const { op } = await sponsoredTransfer();
  assert.ok((await entryPointDeposit()) > reservedFor(op, overheadGas));
  assert.deepEqual(await failedOpOf(env, [op]), {
    errorName: "FailedOp",
    args: [0n, "AA33 reverted: VerifyingPaymaster: paymasterId deposit too low"],
  });
});

test("two operations of one dApp in one bundle cannot both validate against the same balance", async () => {
  const first = await sponsoredTransfer();
  const second = await sponsoredTransfer();
  // Enough for one reservation and a half: the first operation's reservation leaves too little for the second. Without
  // the reservation both would pass, and the second would be paid with the other dApp's money.
  await depositFor(fundingWallet, (reservedFor(first.op, overheadGas) * 3n) / 2n);
  await depositFor(otherFundingWallet, parseEther("5"), anvilKeys.otherFundingWallet);
  assert.deepEqual(await failedOpOf(env, [first.op, second.op]), {
    errorName: "FailedOp",
    args: [1n, "AA33 reverted: VerifyingPaymaster: paymasterId deposit too low"],
  });
  const receipt = await handleOps(env, [first.op]);
  assert.equal(receipt.status, "success");
});

test("a changed gas field, another chain id, another signer, paymasterId or a missing prefix fail the signature (AA34)", async () => {
  await depositFor(fundingWallet, parseEther("1"));
  await depositFor(otherFundingWallet, parseEther("1"), anvilKeys.otherFundingWallet);
  const valid = await sponsoredTransfer();
  await simulateBundle(env, [valid.op]); // the untouched operation passes

  const tampered = {
    callGasLimit: await alter(valid, (op) => ({ ...op, callGasLimit: op.callGasLimit + 1n })),
    verificationGasLimit: await alter(valid, (op) => ({ ...op, verificationGasLimit: op.verificationGasLimit + 1n })),
    preVerificationGas: await alter(valid, (op) => ({ ...op, preVerificationGas: op.preVerificationGas + 1n })),
    maxFeePerGas: await alter(valid, (op) => ({ ...op, maxFeePerGas: op.maxFeePerGas + 1n })),
    maxPriorityFeePerGas: await alter(valid, (op) => ({ ...op, maxPriorityFeePerGas: op.maxPriorityFeePerGas + 1n })),
    callData: await alter(valid, (op) => ({ ...op, callData: concat([op.callData, "0x00"]) })),
    // paymasterAndData's address-wide paymasterId swapped for another funded dApp, signature kept.
    paymasterId: await alter(valid, (op) => ({
      ...op,
      paymasterAndData: concat([
        slice(op.paymasterAndData, 0, 32),
        otherFundingWallet.toLowerCase() as Hex,
        slice(op.paymasterAndData, 52),
      ]),
    })),
    otherChain: (await sponsoredTransfer({ sponsorship: { chainId: 1 } })).op,
    otherSigner: (await sponsoredTransfer({ sponsorship: { signer: createSigner(generatePrivateKey()) } })).op,
    noEip191Prefix: (
      await sponsoredTransfer({
        sponsorship: {
          // Signs the raw hash, as a service forgetting personal_sign would.
          signer: {
            kind: "key",
            address: env.serviceSigner.address,
            signHash: (hash) => sign({ hash, privateKey: env.serviceKey, to: "hex" }),
          },
        },
      })
    ).op,
  };
  for (const [name, op] of Object.entries(tampered)) {
    assert.deepEqual(await failedOpOf(env, [op]), { errorName: "FailedOp", args: [0n, AA34] }, name);
  }
});

test("v other than 27/28 is a signature failure (AA34), a 64-byte signature reverts (AA33)", async () => {
  await depositFor(fundingWallet, parseEther("1"));
  const valid = await sponsoredTransfer();
  const signature = slice(valid.op.paymasterAndData, 20 + 5 * 32, 20 + 5 * 32 + 65);
  const v = Number.parseInt(signature.slice(-2), 16);
  const withSignature = (newSignature: Hex, length = 65) =>
    alter(valid, (op) => ({
      ...op,
      paymasterAndData: concat([
        slice(op.paymasterAndData, 0, 20 + 4 * 32),
        encodeAbiParameters([{ type: "uint256" }], [BigInt(length)]),
        newSignature,
        `0x${"00".repeat(96 - (newSignature.length - 2) / 2)}`,
      ]),
    }));
  const vZeroOne = await withSignature(concat([slice(signature, 0, 64), v === 27 ? "0x00" : "0x01"]));
  assert.deepEqual(await failedOpOf(env, [vZeroOne]), { errorName: "FailedOp", args: [0n, AA34] });

  const compact = await withSignature(slice(signature, 0, 64), 64);
  assert.deepEqual(await failedOpOf(env, [compact]), {
    errorName: "FailedOp",
    args: [0n, "AA33 reverted: VerifyingPaymaster: signature must be 65 bytes (r,s,v)"],
  });
});

test("a passed validUntil or a future validAfter is refused by the EntryPoint (AA32)", async () => {
  await depositFor(fundingWallet, parseEther("1"));
  const now = await latestTimestamp(env);
  const expired = await sponsoredTransfer({ sponsorship: { validUntil: now - 1, validAfter: now - 600 } });
  assert.deepEqual(await failedOpOf(env, [expired.op]), { errorName: "FailedOp", args: [0n, AA32] });
  const notYet = await sponsoredTransfer({ sponsorship: { validUntil: now + 7200, validAfter: now + 3600 } });
  assert.deepEqual(await failedOpOf(env, [notYet.op]), { errorName: "FailedOp", args: [0n, AA32] });

  // The same not-yet-valid operation goes through once the chain's clock reaches validAfter.
  await env.testClient.setNextBlockTimestamp({ timestamp: BigInt(now + 3601) });
  await env.testClient.mine({ blocks: 1 });
  const receipt = await handleOps(env, [notYet.op]);
  const [event] = parseEventLogs({ abi: entryPointAbi, logs: receipt.logs, eventName: "UserOperationEvent" });
  assert.equal(event?.args.success, true);
});

test("a funding wallet withdraws its own balance and no more; nobody else can touch it", async () => {
  await depositFor(fundingWallet, parseEther("1"));
  await depositFor(otherFundingWallet, parseEther("1"), anvilKeys.otherFundingWallet);
  const target = privateKeyToAccount(generatePrivateKey()).address;
  const depositBefore = await entryPointDeposit();

  const wallet = env.wallet(anvilKeys.fundingWallet);
  const hash = await wallet.writeContract({
    ...paymaster(),
    functionName: "withdrawTo",
    args: [target, parseEther("0.4")],
  });
  const receipt = await env.publicClient.waitForTransactionReceipt({ hash });
  const [withdrawn] = parseEventLogs({ abi: paymaster().abi, logs: receipt.logs, eventName: "GasWithdrawn" });
  assert.deepEqual(withdrawn?.args, { paymasterId: fundingWallet, to: target, amount: parseEther("0.4") });
  assert.equal(await env.publicClient.getBalance({ address: target }), parseEther("0.4"));
  assert.equal(await balanceOf(fundingWallet), parseEther("0.6"));
  assert.equal(await balanceOf(otherFundingWallet), parseEther("1"));
  assert.equal(depositBefore - (await entryPointDeposit()), parseEther("0.4"));

  const exceeds = { errorName: "Error", args: ["VerifyingPaymaster: amount exceeds balance"] };
  const simulateWithdraw = (key: Hex, amount: bigint) =>
    revertOf(
      env.publicClient.simulateContract({
        ...paymaster(),
        functionName: "withdrawTo",
        args: [target, amount],
        account: privateKeyToAccount(key).address,
      }),
    );
  assert.deepEqual(await simulateWithdraw(anvilKeys.fundingWallet, parseEther("0.6") + 1n), exceeds);
  assert.deepEqual(await simulateWithdraw(anvilKeys.stranger, 1n), exceeds);
  // The owner has no claim on the dApps' money either.
  assert.deepEqual(await simulateWithdraw(anvilKeys.owner, 1n), exceeds);
});

test("depositFor refuses the zero paymasterId and an empty deposit", async () => {
  const simulateDeposit = (paymasterId: Address, value: bigint) =>
    revertOf(
      env.publicClient.simulateContract({
        ...paymaster(),
        functionName: "depositFor",
        args: [paymasterId],
        value,
        account: fundingWallet,
      }),
    );
  assert.deepEqual(await simulateDeposit(zeroAddress, 1n), {
    errorName: "Error",
    args: ["VerifyingPaymaster: paymasterId is zero"],
  });
  assert.deepEqual(await simulateDeposit(fundingWallet, 0n), {
    errorName: "Error",
    args: ["VerifyingPaymaster: nothing to deposit"],
  });
});

test("only the owner changes the signer set; a rotation loses nothing signed before the old key is removed", async () => {
  await depositFor(fundingWallet, parseEther("1"));
  const newSigner = createSigner(generatePrivateKey());
  const change = (functionName: "addSigner" | "removeSigner", signer: Address, key: Hex = anvilKeys.owner) =>
    env.publicClient.simulateContract({
      ...paymaster(),
      functionName,
      args: [signer],
      account: privateKeyToAccount(key).address,
    });
  const send = async (request: Awaited<ReturnType<typeof change>>["request"]) =>
    env.publicClient.waitForTransactionReceipt({ hash: await env.wallet(anvilKeys.owner).writeContract(request) });
  const isSigner = (signer: Address) =>
    env.publicClient.readContract({ ...paymaster(), functionName: "isSigner", args: [signer] });
  const ownerOnly = { errorName: "Error", args: ["Ownable: caller is not the owner"] };
  assert.deepEqual(await revertOf(change("addSigner", newSigner.address, anvilKeys.stranger)), ownerOnly);
  assert.deepEqual(await revertOf(change("removeSigner", env.serviceSigner.address, anvilKeys.stranger)), ownerOnly);
  assert.deepEqual(await revertOf(change("addSigner", zeroAddress)), {
    errorName: "Error",
    args: ["SignerSet: signer is zero"],
  });
  assert.deepEqual(await revertOf(change("addSigner", env.serviceSigner.address)), {
    errorName: "Error",
    args: ["SignerSet: already a signer"],
  });
  assert.deepEqual(await revertOf(change("removeSigner", newSigner.address)), {
    errorName: "Error",
    args: ["SignerSet: not a signer"],
  });
  assert.deepEqual(
    await revertOf(
      env.publicClient.readContract({
        ...paymaster(),
        functionName: "renounceOwnership",
        account: privateKeyToAccount(anvilKeys.owner).address,
      }),
    ),
    { errorName: "Error", args: ["VerifyingPaymaster: ownership cannot be renounced"] },
  );

  // The rotation: add the new key; both keys' signatures are accepted while both are in the set.
  const signedByOld = await sponsoredTransfer();
  const signedByOldToDrop = await sponsoredTransfer();
  const added = await send((await change("addSigner", newSigner.address)).request);
  const [addedEvent] = parseEventLogs({ abi: paymaster().abi, logs: added.logs, eventName: "SignerAdded" });
  assert.deepEqual(addedEvent?.args, { signer: newSigner.address });
  const signedByNew = await sponsoredTransfer({ sponsorship: { signer: newSigner } });
  assert.equal((await handleOps(env, [signedByOld.op, signedByNew.op])).status, "success");

  // Removing the old key then refuses what it signed and is still pending, and only that.
  const removed = await send((await change("removeSigner", env.serviceSigner.address)).request);
  const [removedEvent] = parseEventLogs({ abi: paymaster().abi, logs: removed.logs, eventName: "SignerRemoved" });
  assert.deepEqual(removedEvent?.args, { signer: env.serviceSigner.address });
  assert.deepEqual([await isSigner(env.serviceSigner.address), await isSigner(newSigner.address)], [false, true]);
  assert.equal(await env.publicClient.readContract({ ...paymaster(), functionName: "signerCount" }), 1n);
  assert.deepEqual(await failedOpOf(env, [signedByOldToDrop.op]), { errorName: "FailedOp", args: [0n, AA34] });
  const signedByNewAgain = await sponsoredTransfer({ sponsorship: { signer: newSigner } });
  assert.equal((await handleOps(env, [signedByNewAgain.op])).status, "success");
});

test("the contract's getHash equals the service's hash for the same operation and terms", async () => {
  const { op } = await sponsoredTransfer();
  const sponsorship = await terms();
  const onChain = await env.publicClient.readContract({
    ...paymaster(),
    functionName: "getHash",
    args: [op, sponsorship.paymasterId, sponsorship.validUntil, sponsorship.validAfter],
  });
  assert.equal(onChain, getVerifyingPaymasterHash(op, sponsorship));
});
