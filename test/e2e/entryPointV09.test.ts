// EntryPoint v0.9 through the service, end to end: the service's local chain (the v0.9.0 release's EntryPoint and
// Simple7702Account, our VerifyingPaymasterV09), Alto 0.0.20 bundling v0.9, and viem. Sequential signing: viem's
// toSimple7702SmartAccount({ entryPoint: '0.9' }) through createBundlerClient with createPaymasterClient (ERC-7677 stub,
// then data, then the account signs). Parallel signing: pm_getPaymasterData with signingPhase "commit", the account
// signs the operation carrying the placeholder paymasterSignature, "finalize" answers the real one, and
// eth_sendUserOperation carries it as paymasterSignature; an operation changed after commit is refused at finalize.
// Also a SimpleAccount deployed through the v0.9 SimpleAccountFactory, and ERC20 mode (TUSD) on v0.9. The paymaster's
// validation and postOp gas is read from anvil's call tracer and printed.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { toSimpleSmartAccount } from "permissionless/accounts";
import {
  type Address,
  decodeFunctionData,
  encodeFunctionData,
  erc20Abi,
  type Hex,
  hexToBigInt,
  http,
  isAddressEqual,
  parseEther,
  parseEventLogs,
  type SignedAuthorization,
  slice,
} from "viem";
import {
  createBundlerClient,
  formatUserOperationRequest,
  toSimple7702SmartAccount,
  type UserOperation,
  type UserOperationReceipt,
} from "viem/account-abstraction";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { entryPointV07Abi } from "../../src/bindings/entryPoints/entryPointV07";
import { PAYMASTER_SIGNATURE_PLACEHOLDER } from "../../src/bindings/entryPoints/entryPointV09";
import { verifyingPaymasterV09Artifact } from "../../src/bindings/paymasters/artifacts";
import { tokenPaymasterV07Artifact } from "../../src/bindings/paymasters/tokenArtifacts";
import { LOCAL_TEST_TOKEN_ADDRESS, mintTestTokens } from "../../src/devChain/tokenDeployment";
import { anvilKeys } from "../contracts/fixtures";
import { confirm } from "../contracts/v07/localStacks";
import { bundlerFor, type Sent } from "../helpers/altoStack";
import { altoStackFile } from "../helpers/altoStackFile";
import { chainDapp, TARGET } from "../helpers/chainApp";
import { paymasterHookGas } from "../helpers/paymasterHookGas";
import { postJsonRpc } from "../helpers/postJsonRpc";
import { withPaymasterFields } from "../helpers/userOps";

const DEPOSIT = parseEther("1");

const { started, endpoint } = altoStackFile(
  { entryPoints: ["0.6", "0.9"], feeTokens: true, deposits: { versions: ["0.9"], value: DEPOSIT } },
  chainDapp,
);

const v09 = () => started().env.chain.info.entryPoints["0.9"];

async function depositOf(): Promise<bigint> {
  return started().env.publicClient.readContract({
    address: v09().verifyingPaymaster,
    abi: verifyingPaymasterV09Artifact.abi,
    functionName: "getBalance",
    args: [started().env.fundingWallet],
  });
}

/** One successful UserOperationEvent of EntryPoint v0.9 paid by our paymaster, the dApp charged what GasCharged says. */
async function checkMined(sender: Address, receipt: UserOperationReceipt, depositBefore: bigint) {
  assert.equal(receipt.success, true, "UserOperationEvent.success");
  const logs = receipt.receipt.logs;
  const [event] = parseEventLogs({ abi: entryPointV07Abi, logs, eventName: "UserOperationEvent" }).filter((e) =>
    isAddressEqual(e.args.sender, sender),
  );
  assert.ok(event, "a UserOperationEvent for the sender");
  assert.ok(isAddressEqual(event.address, v09().entryPoint), "EntryPoint v0.9");
  assert.ok(isAddressEqual(event.args.paymaster, v09().verifyingPaymaster), "our v0.9 paymaster paid");
  const [charged] = parseEventLogs({ abi: verifyingPaymasterV09Artifact.abi, logs, eventName: "GasCharged" }).filter(
    (c) => c.args.userOpHash === event.args.userOpHash,
  );
  assert.ok(charged, "our paymaster charged the operation");
  assert.equal(depositBefore - (await depositOf()), charged.args.charge);
  return event;
}

/** A fresh EOA delegating to Simple7702Account v0.9 (viem's account), and its signed authorization. */
async function delegatedAccount() {
  const { env } = started();
  const owner = privateKeyToAccount(generatePrivateKey());
  const account = await toSimple7702SmartAccount({ client: env.publicClient, owner, entryPoint: "0.9" });
  const authorization: SignedAuthorization = await owner.signAuthorization({
    address: v09().simple7702Account as Address,
    chainId: env.viemChain.id,
    nonce: 0,
  });
  return { owner, account, authorization };
}

async function rpc(method: string, params: unknown[]) {
  return (await postJsonRpc<Record<string, Hex>>(endpoint(), method, params)).body;
}

describe("EntryPoint v0.9, sequential signing (viem's ERC-7677 flow)", () => {
  test("viem's toSimple7702SmartAccount({ entryPoint: '0.9' }) is sponsored through createPaymasterClient and mined", async (tc) => {
    const { owner, account, authorization } = await delegatedAccount();
    assert.ok(isAddressEqual(account.entryPoint.address, v09().entryPoint), "viem's default v0.9 EntryPoint is ours");
    const sent: Sent = [];
    const bundler = bundlerFor(started(), endpoint(), account, sent);
    const depositBefore = await depositOf();
    const hash = await bundler.sendUserOperation({ calls: [{ to: TARGET, value: 0n }], authorization });
    const receipt = await bundler.waitForUserOperationReceipt({ hash, timeout: 30_000 });
    const event = await checkMined(owner.address, receipt, depositBefore);
    assert.equal(event.args.userOpHash, hash);
    const gas = await paymasterHookGas(
      started().env.publicClient,
      receipt.receipt.transactionHash,
      v09().verifyingPaymaster,
    );
    tc.diagnostic(`sequential: validatePaymasterUserOp ${gas.validation} gas, postOp ${gas.postOp} gas`);
    assert.deepEqual(
      sent.map((r) => r.method),
      ["pm_getPaymasterStubData", "pm_getPaymasterData"],
    );
    tc.diagnostic(`actualGasUsed ${event.args.actualGasUsed}`);
  });
});

describe("EntryPoint v0.9, a SimpleAccount deployed by the v0.9 SimpleAccountFactory", () => {
  test("its first operation (factory, factoryData) is sponsored through ERC-7677 and mined", async () => {
    const { env } = started();
    // permissionless 0.4.1 has no v0.9 accounts; its v0.8 SimpleAccount signs the same way (a plain signature of the
    // EIP-712 hash), which v0.9 keeps, so it is pointed at the v0.9 EntryPoint and factory.
    const account = await toSimpleSmartAccount({
      client: env.publicClient,
      owner: privateKeyToAccount(generatePrivateKey()),
      entryPoint: { address: v09().entryPoint, version: "0.8" },
      factoryAddress: v09().simpleAccountFactory,
    });
    const sent: Sent = [];
    const bundler = bundlerFor(started(), endpoint(), account, sent);
    const depositBefore = await depositOf();
    const hash = await bundler.sendUserOperation({ calls: [{ to: TARGET, value: 0n }] });
    const receipt = await bundler.waitForUserOperationReceipt({ hash, timeout: 30_000 });
    await checkMined(account.address, receipt, depositBefore);
    assert.ok(await env.publicClient.getCode({ address: account.address }), "the account was deployed");
    const [stub] = sent;
    assert.ok(stub, "the paymaster client was called");
    assert.equal((stub.params[1] as string).toLowerCase(), v09().entryPoint.toLowerCase());
  });
});

describe("EntryPoint v0.9, parallel signing (signingPhase commit, then finalize)", () => {
  /** Gas for the operation, as viem's ERC-7677 flow prepares it (stub, Alto's estimate), then our fields dropped. */
  async function preparedOperation() {
    const { owner, account, authorization } = await delegatedAccount();
    const bundler = bundlerFor(started(), endpoint(), account);
    const prepared = await bundler.prepareUserOperation({ calls: [{ to: TARGET, value: 0n }], authorization });
    // Our fields are replaced at commit; the sequential signature inside paymasterData goes with them.
    const op = { ...(prepared as unknown as UserOperation<"0.9">), paymasterData: undefined };
    return { owner, account, op, authorization };
  }

  /** pm_getPaymasterData for `op` as sent (its signature included) in one phase of parallel signing. */
  const inPhase = (op: UserOperation<"0.9">, signingPhase: "commit" | "finalize") =>
    rpc("pm_getPaymasterData", [formatUserOperationRequest(op), v09().entryPoint, "0x7a69", { signingPhase }]);

  test("commit, the account signs over the placeholder, finalize, eth_sendUserOperation with paymasterSignature: mined", async (tc) => {
    const { env, alto } = started();
    const { owner, account, op } = await preparedOperation();
    const commit = await inPhase({ ...op, signature: "0x" }, "commit");
    assert.ok(commit.result, JSON.stringify(commit.error));
    assert.equal(commit.result.paymasterSignature, PAYMASTER_SIGNATURE_PLACEHOLDER);
    assert.ok(isAddressEqual(commit.result.paymaster as Address, v09().verifyingPaymaster));
    const withFields: UserOperation<"0.9"> = withPaymasterFields(op, commit.result);
    const signature = await account.signUserOperation(withFields);
    const finalize = await inPhase({ ...withFields, signature }, "finalize");
    assert.ok(finalize.result, JSON.stringify(finalize.error));
    assert.notEqual(finalize.result.paymasterSignature, PAYMASTER_SIGNATURE_PLACEHOLDER);
    assert.equal(
      finalize.result.paymasterData,
      withFields.paymasterData,
      "finalize changes nothing the account signed",
    );
    const final = { ...withFields, signature, paymasterSignature: finalize.result.paymasterSignature as Hex };
    const depositBefore = await depositOf();
    const bundler = createBundlerClient({ client: env.publicClient, transport: http(alto.url), pollingInterval: 50 });
    const hash = (await bundler.request({
      method: "eth_sendUserOperation",
      params: [formatUserOperationRequest(final), v09().entryPoint],
    })) as Hex;
    const receipt = await bundler.waitForUserOperationReceipt({ hash, timeout: 30_000 });
    const event = await checkMined(owner.address, receipt, depositBefore);
    const gas = await paymasterHookGas(
      started().env.publicClient,
      receipt.receipt.transactionHash,
      v09().verifyingPaymaster,
    );
    tc.diagnostic(
      `parallel-signed actualGasUsed ${event.args.actualGasUsed}; validatePaymasterUserOp ${gas.validation} gas, ` +
        `postOp ${gas.postOp} gas`,
    );
  });

  test("an operation whose signed fields changed after commit is refused at finalize, with the reason", async () => {
    const { account, op } = await preparedOperation();
    const commit = await inPhase({ ...op, signature: "0x" }, "commit");
    assert.ok(commit.result, JSON.stringify(commit.error));
    const changed: UserOperation<"0.9"> = withPaymasterFields(
      { ...op, callGasLimit: op.callGasLimit + 1n },
      commit.result,
    );
    const signature = await account.signUserOperation(changed);
    const finalize = await inPhase({ ...changed, signature }, "finalize");
    assert.equal(finalize.result, undefined);
    assert.equal(finalize.error?.code, -32003);
    assert.match(finalize.error?.message ?? "", /Not sponsored: the operation changed since commit/);
  });
});

describe("EntryPoint v0.9, ERC20 mode through ERC-7677 with { token }", () => {
  test("a Simple7702Account v0.9 holding only TUSD pays its operation in TUSD, mined by Alto", async (tc) => {
    const { env } = started();
    const { owner, account, authorization } = await delegatedAccount();
    const minted = 100_000_000n;
    await confirm(
      env,
      mintTestTokens(
        { publicClient: env.publicClient, walletClient: env.wallet(anvilKeys.owner) },
        owner.address,
        minted,
      ),
    );
    const bundler = bundlerFor(started(), endpoint(), account);
    const calls = [
      {
        to: LOCAL_TEST_TOKEN_ADDRESS,
        value: 0n,
        data: encodeFunctionData({ abi: erc20Abi, functionName: "approve", args: [v09().tokenPaymaster, 20_000_000n] }),
      },
      { to: TARGET, value: 0n },
    ];
    const hash = await bundler.sendUserOperation({
      calls,
      authorization,
      paymasterContext: { token: LOCAL_TEST_TOKEN_ADDRESS },
    });
    const receipt = await bundler.waitForUserOperationReceipt({ hash, timeout: 30_000 });
    assert.equal(receipt.success, true, "UserOperationEvent.success");
    assert.ok(receipt.paymaster && isAddressEqual(receipt.paymaster, v09().tokenPaymaster), "our v0.9 token paymaster");
    const logs = receipt.receipt.logs;
    const [event] = parseEventLogs({ abi: entryPointV07Abi, logs, eventName: "UserOperationEvent" }).filter((e) =>
      isAddressEqual(e.args.sender, owner.address),
    );
    assert.ok(event && isAddressEqual(event.address, v09().entryPoint), "EntryPoint v0.9");
    const [charged] = parseEventLogs({ abi: tokenPaymasterV07Artifact.abi, logs, eventName: "TokenCharged" }).filter(
      (c) => c.args.userOpHash === hash,
    );
    assert.ok(charged && charged.args.amount > 0n, "a charge in TUSD");
    const balance = await env.publicClient.readContract({
      address: LOCAL_TEST_TOKEN_ADDRESS,
      abi: erc20Abi,
      functionName: "balanceOf",
      args: [owner.address],
    });
    assert.equal(minted - balance, charged.args.amount, "TUSD down by the charge");
    const gas = await paymasterHookGas(
      started().env.publicClient,
      receipt.receipt.transactionHash,
      v09().tokenPaymaster,
    );
    // The limits signed are in paymasterAndData as the bundle carried it: paymaster ‖ uint128 ‖ uint128 ‖ …
    const bundle = await env.publicClient.getTransaction({ hash: receipt.receipt.transactionHash });
    const { args } = decodeFunctionData({ abi: entryPointV07Abi, data: bundle.input });
    const [op] = args[0] as readonly { paymasterAndData: Hex }[];
    assert.ok(op, "the bundle carries the operation");
    const signed = {
      paymasterVerificationGasLimit: hexToBigInt(slice(op.paymasterAndData, 20, 36)),
      paymasterPostOpGasLimit: hexToBigInt(slice(op.paymasterAndData, 36, 52)),
    };
    assert.ok(gas.validation <= signed.paymasterVerificationGasLimit, "validation within its signed limit");
    assert.ok(gas.postOp <= signed.paymasterPostOpGasLimit, "postOp within its signed limit");
    tc.diagnostic(
      `charged ${charged.args.amount} TUSD units; actualGasUsed ${event.args.actualGasUsed}; token paymaster ` +
        `validatePaymasterUserOp ${gas.validation} gas, postOp ${gas.postOp} gas (signed limits ` +
        `${signed.paymasterVerificationGasLimit} and ${signed.paymasterPostOpGasLimit})`,
    );
  });
});
