// EntryPoint v0.7 and v0.8 through the service, end to end: the service's local chain (all three EntryPoints, our
// VerifyingPaymasterV07 per later version), Alto bundling all three, and the clients people use. viem's
// createBundlerClient with createPaymasterClient (ERC-7677: pm_getPaymasterStubData, then pm_getPaymasterData) sends
// operations of permissionless's SimpleAccount 0.7 and 0.8 (no factory address given: the canonical ones) and of an
// EIP-7702 account on 0.8; a batch of two whitelisted calls; a call that is not whitelisted is refused with our reason
// at the stub, before anything reaches the bundler; and pimlico's pm_sponsorUserOperation [userOp, entryPoint, context] for a v0.7
// operation, whose gas the service has Alto estimate. Each mined operation is checked on chain: UserOperationEvent of
// the version's EntryPoint with success, our paymaster paying, and the dApp's deposit in that paymaster charged.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { toSimpleSmartAccount } from "permissionless/accounts";
import { type Address, isAddressEqual, parseEther, parseEventLogs } from "viem";
import type { UserOperationReceipt } from "viem/account-abstraction";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { entryPointV07Abi } from "../../src/bindings/entryPoints/entryPointV07";
import { verifyingPaymasterV07Artifact } from "../../src/bindings/paymasters/artifacts";
import {
  PAYMASTER_POST_OP_GAS_LIMIT_V07,
  PAYMASTER_VERIFICATION_GAS_LIMIT_V07,
} from "../../src/bindings/paymasters/verifyingPaymasterGasV07";
import type { LaterEntryPointVersion } from "../../src/config";
import { listSponsorships } from "../../src/storage/sponsorships";
import { bundlerFor, type Sent } from "../helpers/altoStack";
import { altoStackFile } from "../helpers/altoStackFile";
import { chainDapp, TARGET } from "../helpers/chainApp";
import { whitelist } from "../helpers/dappSetup";
import { eip7702AccountV08 } from "../helpers/eip7702AccountV08";
import { notWhitelistedAtStub } from "../helpers/paymasterRefusal";
import { pimlicoBundlerFor } from "../helpers/pimlicoBundler";

/** A second whitelisted address (a call without data), for batches. */
const OTHER_TARGET: Address = "0x2222222222222222222222222222222222222222";
/** Not whitelisted: a call to it is refused by the contract rule. */
const STRANGER: Address = "0x3333333333333333333333333333333333333333";
const DEPOSIT = parseEther("1");

const { started, dapp, endpoint } = altoStackFile(
  { entryPoints: ["0.6", "0.7", "0.8"], deposits: { versions: ["0.7", "0.8"], value: DEPOSIT } },
  async (t) => {
    const dapp = await chainDapp(t);
    await whitelist(t, dapp, OTHER_TARGET, [], []);
    return dapp;
  },
);

function paymasterOf(version: LaterEntryPointVersion): Address {
  return started().env.chain.info.entryPoints[version].verifyingPaymaster;
}

async function depositOf(version: LaterEntryPointVersion): Promise<bigint> {
  return started().env.publicClient.readContract({
    address: paymasterOf(version),
    abi: verifyingPaymasterV07Artifact.abi,
    functionName: "getBalance",
    args: [started().env.fundingWallet],
  });
}

/**
 * On chain: one successful UserOperationEvent of the version's EntryPoint for the sender, paid by our paymaster, and
 * the dApp's deposit there charged by exactly what the paymaster's GasCharged says.
 */
async function checkMined(
  version: LaterEntryPointVersion,
  sender: Address,
  receipt: UserOperationReceipt,
  depositBefore: bigint,
) {
  const { env, t } = started();
  assert.equal(receipt.success, true, "UserOperationEvent.success");
  assert.ok(receipt.paymaster && isAddressEqual(receipt.paymaster, paymasterOf(version)), "our paymaster paid");
  const logs = receipt.receipt.logs;
  const [event, ...others] = parseEventLogs({ abi: entryPointV07Abi, logs, eventName: "UserOperationEvent" }).filter(
    (e) => isAddressEqual(e.args.sender, sender),
  );
  assert.ok(event && others.length === 0, "one UserOperationEvent for the sender");
  assert.ok(isAddressEqual(event.address, env.chain.info.entryPoints[version].entryPoint), "the version's EntryPoint");
  assert.equal(event.args.success, true);
  assert.ok(isAddressEqual(event.args.paymaster, paymasterOf(version)));
  const [charged] = parseEventLogs({ abi: verifyingPaymasterV07Artifact.abi, logs, eventName: "GasCharged" }).filter(
    (c) => c.args.userOpHash === event.args.userOpHash,
  );
  assert.ok(charged, "our paymaster charged the operation");
  assert.ok(isAddressEqual(charged.args.paymasterId, env.fundingWallet), "to the dApp's funding wallet");
  assert.equal(depositBefore - (await depositOf(version)), charged.args.charge);
  // The record the service made when it signed names the operation by the hash the EntryPoint gave it (what
  // settlement matches on), with the sender and nonce.
  const records = (await listSponsorships(t.db, dapp().paymasterId)).filter(
    (r) => r.user_op_hash?.toLowerCase() === event.args.userOpHash.toLowerCase(),
  );
  assert.equal(records.length, 1, "one sponsorship record with the EntryPoint's userOpHash");
  assert.equal(records[0]?.sponsored, true);
  assert.equal(records[0]?.sender.toLowerCase(), sender.toLowerCase());
  assert.equal(BigInt(records[0]?.nonce ?? -1), event.args.nonce);
  return event;
}

/** The answers checked against what the ERC-7677 methods must give for a later EntryPoint. */
function checkErc7677Requests(sent: Sent, version: LaterEntryPointVersion) {
  const stub = sent.find((r) => r.method === "pm_getPaymasterStubData");
  const data = sent.find((r) => r.method === "pm_getPaymasterData");
  assert.ok(stub && data, `both ERC-7677 methods were called: ${sent.map((r) => r.method).join(", ")}`);
  assert.equal(
    (stub.params[1] as string).toLowerCase(),
    started().env.chain.info.entryPoints[version].entryPoint.toLowerCase(),
  );
}

async function simpleAccount(version: LaterEntryPointVersion) {
  const { env } = started();
  return toSimpleSmartAccount({
    client: env.publicClient,
    owner: privateKeyToAccount(generatePrivateKey()),
    entryPoint: { address: env.chain.info.entryPoints[version].entryPoint, version },
  });
}

for (const version of ["0.7", "0.8"] as const) {
  describe(`EntryPoint v${version}, ERC-7677 with viem's paymaster client`, () => {
    test("a permissionless SimpleAccount's first operation is sponsored by us and mined", async (tc) => {
      const account = await simpleAccount(version);
      const sent: Sent = [];
      const bundler = bundlerFor(started(), endpoint(), account, sent);
      const depositBefore = await depositOf(version);
      const hash = await bundler.sendUserOperation({ calls: [{ to: TARGET, value: 0n }] });
      const receipt = await bundler.waitForUserOperationReceipt({ hash, timeout: 30_000 });
      const event = await checkMined(version, account.address, receipt, depositBefore);
      assert.equal(event.args.userOpHash, hash);
      checkErc7677Requests(sent, version);
      assert.ok(await started().env.publicClient.getCode({ address: account.address }), "the account was deployed");
      tc.diagnostic(`actualGasUsed ${event.args.actualGasUsed}`);
    });

    test("a batch of two whitelisted calls (executeBatch) is sponsored and mined", async () => {
      const account = await simpleAccount(version);
      const bundler = bundlerFor(started(), endpoint(), account);
      const depositBefore = await depositOf(version);
      const calls = [
        { to: TARGET, value: 0n },
        { to: OTHER_TARGET, value: 0n },
      ];
      const callData = await account.encodeCalls(calls);
      // SimpleAccount 0.7: executeBatch(address[],uint256[],bytes[]); 0.8: executeBatch((address,uint256,bytes)[]).
      assert.equal(callData.slice(0, 10), version === "0.7" ? "0x47e1da2a" : "0x34fcd5be");
      const hash = await bundler.sendUserOperation({ calls });
      const receipt = await bundler.waitForUserOperationReceipt({ hash, timeout: 30_000 });
      await checkMined(version, account.address, receipt, depositBefore);
    });

    test("a call that is not whitelisted reaches the caller as an error with our reason", async () => {
      const account = await simpleAccount(version);
      const sent: Sent = [];
      const bundler = bundlerFor(started(), endpoint(), account, sent);
      const calls = [
        { to: TARGET, value: 0n },
        { to: STRANGER, value: 0n },
      ];
      await notWhitelistedAtStub(bundler.sendUserOperation({ calls }), endpoint(), sent, STRANGER);
      assert.equal(await started().env.publicClient.getCode({ address: account.address }), undefined);
    });
  });
}

describe("EntryPoint v0.8, an EIP-7702 account", () => {
  test("an EOA delegating to Simple7702Account is sponsored and mined with its authorization", async () => {
    const { env } = started();
    const { owner, account, implementation, authorization } = await eip7702AccountV08(env);
    const sent: Sent = [];
    const bundler = bundlerFor(started(), endpoint(), account, sent);
    const depositBefore = await depositOf("0.8");
    const hash = await bundler.sendUserOperation({ calls: [{ to: TARGET, value: 0n }], authorization });
    const receipt = await bundler.waitForUserOperationReceipt({ hash, timeout: 30_000 });
    await checkMined("0.8", owner.address, receipt, depositBefore);
    checkErc7677Requests(sent, "0.8");
    const data = sent.find((r) => r.method === "pm_getPaymasterData");
    assert.ok(data, "pm_getPaymasterData was called");
    assert.ok((data.params[0] as { eip7702Auth?: unknown }).eip7702Auth, "the authorization went to the paymaster");
    const code = await env.publicClient.getCode({ address: owner.address });
    assert.equal(code?.toLowerCase(), `0xef0100${implementation.slice(2).toLowerCase()}`);
  });
});

describe("EntryPoint v0.7, pimlico's pm_sponsorUserOperation [userOp, entryPoint, context]", () => {
  test("the service has the bundler estimate the gas, signs, and the operation is mined", async () => {
    const { env } = started();
    const entryPoint = { address: env.chain.info.entryPoints["0.7"].entryPoint, version: "0.7" } as const;
    const account = await simpleAccount("0.7");
    const { bundler, answers } = pimlicoBundlerFor(started(), endpoint(), account, entryPoint);
    const depositBefore = await depositOf("0.7");
    const hash = await bundler.sendUserOperation({ calls: [{ to: TARGET, value: 0n }] });
    const receipt = await bundler.waitForUserOperationReceipt({ hash, timeout: 30_000 });
    await checkMined("0.7", account.address, receipt, depositBefore);
    const answer = answers.at(-1);
    assert.ok(answer, "pm_sponsorUserOperation answered");
    assert.equal(answer.paymasterVerificationGasLimit, PAYMASTER_VERIFICATION_GAS_LIMIT_V07);
    assert.equal(answer.paymasterPostOpGasLimit, PAYMASTER_POST_OP_GAS_LIMIT_V07);
    for (const field of ["callGasLimit", "verificationGasLimit", "preVerificationGas"]) {
      assert.equal(typeof answer[field], "bigint", `${field} came back, estimated by the bundler`);
    }
  });
});
