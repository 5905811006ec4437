// The service's own gas estimate for EntryPoint v0.7, v0.8 and v0.9 operations (gasEstimationSimulationV07.ts), proved
// on the local chain with the real EntryPoints (v0.9: the canonical v0.9.0, simulated with rc.1's code) and our
// paymasters: each operation is estimated with the stub paymaster fields and dummy signatures, given the estimate with
// v0.6's margins, signed by the service's key and the account, and mined with handleOps; its call must succeed. The
// estimate must lie a little above what the trace shows the call used, and cover the least verificationGasLimit
// handleOps takes by less than 8,000 gas. A SimpleAccount's first and later operation, an EIP-7702 EOA's first (v0.8,
// v0.9), an ERC20-mode one whose postOp the simulation runs; and a call that reverts, a bad nonce, a dead node.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { toSimpleSmartAccount } from "permissionless/accounts";
import {
  type Address,
  BaseError,
  ContractFunctionRevertedError,
  concat,
  createPublicClient,
  encodeAbiParameters,
  encodeFunctionData,
  erc20Abi,
  type Hex,
  http,
  isAddressEqual,
  keccak256,
  maxUint256,
  parseAbi,
  parseEther,
  parseEventLogs,
  type SignedAuthorization,
  toFunctionSelector,
  toHex,
  zeroAddress,
} from "viem";
import { type SmartAccount, toSimple7702SmartAccount } from "viem/account-abstraction";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { entryPointV07Abi } from "../../src/bindings/entryPoints/entryPointV07";
import {
  eip7702AuthOf,
  packUserOperation,
  type UserOperationV07,
} from "../../src/bindings/entryPoints/userOperationV07";
import type { PaymasterGasLimits } from "../../src/bindings/paymasters/paymasterAndDataV07";
import {
  encodeVerifyingPaymasterDataV07,
  getVerifyingPaymasterHashV07,
} from "../../src/bindings/paymasters/paymasterAndDataV07";
import { tokenPaymasterGasLimits } from "../../src/bindings/paymasters/token";
import {
  encodeTokenPaymasterData,
  PRICE_SOURCE,
  type TokenFeeTerms,
} from "../../src/bindings/paymasters/tokenPaymasterAndData";
import { getTokenPaymasterHashV07 } from "../../src/bindings/paymasters/tokenPaymasterAndDataV07";
import { paymasterGasLimitsV07 } from "../../src/bindings/paymasters/verifyingPaymasterGasV07";
import type { LaterEntryPointVersion } from "../../src/config";
import { LOCAL_TEST_TOKEN_ADDRESS } from "../../src/devChain/tokenDeployment";
import { withMargin } from "../../src/gasEstimation/gasEstimation";
import { EstimationUnavailableError, OperationRevertedError } from "../../src/gasEstimation/gasEstimationErrors";
import { simulateOperationGasV07 } from "../../src/gasEstimation/gasEstimationSimulationV07";
import { DUMMY_SIGNATURE } from "../../src/gasEstimation/gasEstimationStub";
import { anvilKeys } from "../contracts/fixtures";
import { confirm, depositForFunding, type LocalStacks, startLocalStacks } from "../contracts/v07/localStacks";

const VERSIONS = ["0.7", "0.8", "0.9"] as const;
const bundler = privateKeyToAccount(anvilKeys.bundler).address;

let env: LocalStacks;

before(async () => {
  env = await startLocalStacks();
  await depositForFunding(env, VERSIONS, parseEther("1"));
});
after(() => env?.stop());

const stack = (version: LaterEntryPointVersion) => env.chain.info.entryPoints[version];

/** permissionless has no v0.9 SimpleAccount; its v0.8 one signs alike, pointed at v0.9's EntryPoint and factory. */
function simpleAccount(version: LaterEntryPointVersion): Promise<SmartAccount> {
  return toSimpleSmartAccount({
    client: env.publicClient,
    owner: privateKeyToAccount(generatePrivateKey()),
    entryPoint: { address: stack(version).entryPoint, version: version === "0.9" ? "0.8" : version },
    ...(version === "0.9" ? { factoryAddress: stack(version).simpleAccountFactory } : {}),
  });
}

/** A fresh EOA delegating to the version's Simple7702Account, and its signed authorization (v0.8 and v0.9). */
async function delegatedAccount(version: "0.8" | "0.9") {
  const owner = privateKeyToAccount(generatePrivateKey());
  const account = await toSimple7702SmartAccount({ client: env.publicClient, owner, entryPoint: version });
  const implementation = stack(version).simple7702Account as Address;
  const authorization = await owner.signAuthorization({ address: implementation, chainId: env.viemChain.id, nonce: 0 });
  return { account, authorization };
}

/** A paymaster of ours as the service uses it: the stub it estimates with, and its signed paymasterData. */
interface Sponsor {
  paymaster: Address;
  limits: PaymasterGasLimits;
  stubData: Hex;
  sign(unsigned: UserOperationV07): Promise<Hex>;
}

const chainNow = async () => Number((await env.publicClient.getBlock()).timestamp);

/** SPONSORED mode: the verifying paymaster, the funding wallet's deposit. */
async function verifying(version: LaterEntryPointVersion): Promise<Sponsor> {
  const paymaster = stack(version).verifyingPaymaster;
  const terms = { paymasterId: env.fundingWallet, validUntil: (await chainNow()) + 600, validAfter: 0 };
  const limits = paymasterGasLimitsV07({});
  return {
    paymaster,
    limits,
    stubData: encodeVerifyingPaymasterDataV07({ ...terms, signature: DUMMY_SIGNATURE }),
    sign: async (unsigned) => {
      const context = { ...terms, ...limits, paymaster, chainId: env.viemChain.id };
      const hash = getVerifyingPaymasterHashV07(packUserOperation(unsigned), context);
      return encodeVerifyingPaymasterDataV07({ ...terms, signature: await env.serviceSigner.signHash(hash) });
    },
  };
}

/** ERC20 mode: the token paymaster charging TUSD at a signed rate, its postOp run in the simulation too. */
async function token(version: LaterEntryPointVersion): Promise<Sponsor> {
  const paymaster = stack(version).tokenPaymaster;
  const terms: TokenFeeTerms = {
    priceSource: PRICE_SOURCE.exchangeRate,
    validUntil: (await chainNow()) + 600,
    validAfter: 0,
    feeToken: LOCAL_TEST_TOKEN_ADDRESS,
    oracleAggregator: zeroAddress,
    exchangeRate: 3_000n * 10n ** 6n,
    priceMarkup: 1_100_000,
  };
  const limits = tokenPaymasterGasLimits({});
  return {
    paymaster,
    limits,
    stubData: encodeTokenPaymasterData({ ...terms, signature: DUMMY_SIGNATURE }),
    sign: async (unsigned) => {
      const context = { ...terms, ...limits, paymaster, chainId: env.viemChain.id };
      const hash = getTokenPaymasterHashV07(packUserOperation(unsigned), context);
      return encodeTokenPaymasterData({ ...terms, signature: await env.serviceSigner.signHash(hash) });
    },
  };
}

interface Draft {
  account: SmartAccount;
  sponsor: Sponsor;
  /** What simulateOperationGasV07 is given: our stub paymaster fields and dummy signatures, no gas values. */
  op: UserOperationV07;
  authorization?: SignedAuthorization;
}

/** The account's operation calling `calls`, as the service estimates it. */
async function draft(
  version: LaterEntryPointVersion,
  account: SmartAccount,
  calls: { to: Address; value: bigint; data?: Hex }[],
  options: { authorization?: SignedAuthorization; sponsor?: Sponsor } = {},
): Promise<Draft> {
  const { authorization } = options;
  const sponsor = options.sponsor ?? (await verifying(version));
  const factoryArgs = authorization
    ? { factory: "0x7702" as const, factoryData: "0x" as Hex }
    : await account.getFactoryArgs();
  const op: UserOperationV07 = {
    sender: account.address,
    nonce: await account.getNonce(),
    ...(factoryArgs.factory ? { factory: factoryArgs.factory, factoryData: factoryArgs.factoryData } : {}),
    callData: await account.encodeCalls(calls),
    callGasLimit: 0n,
    verificationGasLimit: 0n,
    preVerificationGas: 0n,
    maxFeePerGas: 0n,
    maxPriorityFeePerGas: 0n,
    paymaster: sponsor.paymaster,
    paymasterData: sponsor.stubData,
    ...sponsor.limits,
    signature: DUMMY_SIGNATURE,
    ...(authorization ? { eip7702Auth: eip7702AuthOf(authorization) } : {}),
  };
  return { account, sponsor, op, ...(authorization ? { authorization } : {}) };
}

const POST_OP_SELECTOR = toFunctionSelector("function postOp(uint8, bytes, uint256, uint256)");

interface CallFrame {
  from: string;
  to?: string;
  input: string;
  gasUsed: Hex;
  calls?: CallFrame[];
}

/** From the bundle's call trace: the gas of the EntryPoint's call with the operation's callData, and of validation. */
async function tracedGas(transactionHash: Hex, version: LaterEntryPointVersion, op: UserOperationV07) {
  const request = env.publicClient.request as unknown as (args: {
    method: string;
    params: unknown[];
  }) => Promise<CallFrame>;
  const root = await request({ method: "debug_traceTransaction", params: [transactionHash, { tracer: "callTracer" }] });
  const frames: CallFrame[] = [];
  const walk = (frame: CallFrame) => {
    frames.push(frame);
    for (const child of frame.calls ?? []) walk(child);
  };
  walk(root);
  const entryPoint = stack(version).entryPoint;
  const fromEntryPoint = (frame: CallFrame) => isAddressEqual(frame.from as Address, entryPoint);
  const call = frames.find(
    (f) => fromEntryPoint(f) && f.to && isAddressEqual(f.to as Address, op.sender) && f.input === op.callData,
  );
  assert.ok(call, "the EntryPoint called the account with the operation's callData");
  // validateUserOp (selector 0x19822f7c) and, for a first operation, the account's creation through SenderCreator.
  const validation = frames.filter(
    (f) =>
      fromEntryPoint(f) &&
      ((f.to && isAddressEqual(f.to as Address, op.sender) && f.input.startsWith("0x19822f7c")) ||
        f.input.startsWith("0x570e1a36")),
  );
  const postOp = frames.find((f) => fromEntryPoint(f) && f.input.startsWith(POST_OP_SELECTOR));
  return {
    call: BigInt(call.gasUsed),
    validation: validation.reduce((sum, f) => sum + BigInt(f.gasUsed), 0n),
    postOp: postOp ? BigInt(postOp.gasUsed) : 0n,
  };
}

type Gas = Pick<
  UserOperationV07,
  "callGasLimit" | "verificationGasLimit" | "preVerificationGas" | "maxFeePerGas" | "maxPriorityFeePerGas"
>;

/** The draft with `gas`, signed as the service and the account will sign it, packed for handleOps. */
async function signed(d: Draft, gas: Gas) {
  const unsigned: UserOperationV07 = { ...d.op, ...gas };
  const sponsored: UserOperationV07 = { ...unsigned, paymasterData: await d.sponsor.sign(unsigned) };
  const signature = await d.account.signUserOperation({
    ...sponsored,
    ...(d.op.factory ? { factory: d.op.factory as Address, factoryData: d.op.factoryData } : {}),
    ...(d.authorization ? { authorization: d.authorization } : {}),
  } as Parameters<SmartAccount["signUserOperation"]>[0]);
  return packUserOperation({ ...sponsored, signature });
}

/** Why handleOps would refuse the operation in an eth_call, or undefined when it would run (a delegation as code). */
async function refusal(version: LaterEntryPointVersion, d: Draft, gas: Gas): Promise<string | undefined> {
  const packed = await signed(d, gas);
  try {
    await env.publicClient.simulateContract({
      address: stack(version).entryPoint,
      abi: entryPointV07Abi,
      functionName: "handleOps",
      args: [[packed], bundler],
      account: bundler,
      ...(d.authorization
        ? { stateOverride: [{ address: d.op.sender, code: concat(["0xef0100", d.authorization.address]) }] }
        : {}),
    });
    return undefined;
  } catch (error) {
    const reverted = error instanceof BaseError && error.walk((e) => e instanceof ContractFunctionRevertedError);
    if (reverted instanceof ContractFunctionRevertedError && reverted.data?.errorName.startsWith("FailedOp")) {
      return String(reverted.data.args?.[1]);
    }
    throw error;
  }
}

/** Mines the draft with `gas`; the call must have run without reverting. */
async function mine(version: LaterEntryPointVersion, d: Draft, gas: Gas) {
  const receipt = await confirm(
    env,
    env.wallet(anvilKeys.bundler).writeContract({
      address: stack(version).entryPoint,
      abi: entryPointV07Abi,
      functionName: "handleOps",
      args: [[await signed(d, gas)], bundler],
      ...(d.authorization ? { authorizationList: [d.authorization] } : {}),
    }),
  );
  const [event] = parseEventLogs({ abi: entryPointV07Abi, logs: receipt.logs, eventName: "UserOperationEvent" });
  assert.ok(event && isAddressEqual(event.args.sender, d.op.sender), "a UserOperationEvent for the sender");
  assert.equal(event.args.success, true, "the call did not revert (UserOperationEvent.success)");
  return { ...(await tracedGas(receipt.transactionHash, version, d.op)), actualGasUsed: event.args.actualGasUsed };
}

/**
 * How far the estimate may lie above the trace. executionGas holds the call and the EntryPoint's frame around it, a
 * few hundred gas; on v0.7 it is read without the paymaster, whose validation can no longer warm what the call touches
 * (the token paymaster reads the fee token: some 2,500 gas more). verificationGas lies above the least
 * verificationGasLimit handleOps takes by the deposit bookkeeping of the simulation without paymaster (about 5,000).
 */
const EXECUTION_FRAME_BOUND: Record<LaterEntryPointVersion, bigint> = { "0.7": 4_000n, "0.8": 1_000n, "0.9": 1_000n };
const VERIFICATION_OVER_BOUND = 8_000n;

/** Estimates, checks the figures against handleOps and the trace, and mines the operation with v0.6's margins. */
async function estimateAndMine(
  version: LaterEntryPointVersion,
  d: Draft,
  what: string,
  t: { diagnostic(m: string): void },
) {
  const estimate = await simulateOperationGasV07(env.publicClient, version, stack(version).entryPoint, d.op);
  const block = await env.publicClient.getBlock();
  const gas: Gas = {
    callGasLimit: withMargin(estimate.executionGas),
    verificationGasLimit: withMargin(estimate.verificationGas),
    preVerificationGas: 60_000n,
    maxPriorityFeePerGas: 1_000_000_000n,
    maxFeePerGas: 2n * (block.baseFeePerGas ?? 0n) + 1_000_000_000n,
  };
  // The estimate itself suffices as verificationGasLimit (no margin), and 8,000 less does not.
  assert.equal(await refusal(version, d, { ...gas, verificationGasLimit: estimate.verificationGas }), undefined);
  const under = await refusal(version, d, {
    ...gas,
    verificationGasLimit: estimate.verificationGas - VERIFICATION_OVER_BOUND,
  });
  assert.match(under ?? "accepted", /^AA(13|23|26)/, "8,000 under the estimate validation runs out of gas");
  const used = await mine(version, d, gas);
  t.diagnostic(
    `v${version} ${what}: executionGas ${estimate.executionGas} (the call used ${used.call}, postOp ${used.postOp}), ` +
      `verificationGas ${estimate.verificationGas}; signed callGasLimit ${gas.callGasLimit}, verificationGasLimit ` +
      `${gas.verificationGasLimit}; actualGasUsed ${used.actualGasUsed}`,
  );
  const frame = estimate.executionGas - used.call;
  assert.ok(
    frame > 0n && frame < EXECUTION_FRAME_BOUND[version],
    `executionGas ${estimate.executionGas}: ${frame} over the trace`,
  );
  return estimate;
}

const transferNothing = () => ({ to: privateKeyToAccount(generatePrivateKey()).address, value: 0n });
const tokenTransfer = (amount: bigint) => ({
  to: LOCAL_TEST_TOKEN_ADDRESS,
  value: 0n,
  data: encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [bundler, amount] }),
});

for (const version of VERSIONS) {
  describe(`EntryPoint v${version}`, () => {
    test("the simulation gives our paymaster its deposit in the EntryPoint's deposits mapping (slot 0, a whole word)", async () => {
      const paymaster = stack(version).verifyingPaymaster;
      const slot = keccak256(encodeAbiParameters([{ type: "address" }, { type: "uint256" }], [paymaster, 0n]));
      const balance = await env.publicClient.readContract({
        address: stack(version).entryPoint,
        abi: parseAbi(["function balanceOf(address) view returns (uint256)"]),
        functionName: "balanceOf",
        args: [paymaster],
        stateOverride: [
          { address: stack(version).entryPoint, stateDiff: [{ slot, value: toHex(12345n, { size: 32 }) }] },
        ],
      });
      assert.equal(balance, 12345n);
    });

    test("a fresh SimpleAccount's first operation (initCode and a call), then a later one, mined with the estimate", async (t) => {
      const account = await simpleAccount(version);
      await estimateAndMine(version, await draft(version, account, [transferNothing()]), "first operation", t);
      assert.ok(await env.publicClient.getCode({ address: account.address }), "the account was deployed");
      await estimateAndMine(
        version,
        await draft(version, account, [transferNothing(), transferNothing()]),
        "later operation",
        t,
      );
    });

    if (version !== "0.7") {
      test("an EOA delegating to Simple7702Account in the same bundle (the authorization as a code override)", async (t) => {
        const { account, authorization } = await delegatedAccount(version);
        await estimateAndMine(
          version,
          await draft(version, account, [transferNothing()], { authorization }),
          "EIP-7702 first operation",
          t,
        );
      });
    }

    test("ERC20 mode: a first operation approving the token paymaster, whose postOp the simulation runs", async (t) => {
      const account = await simpleAccount(version);
      await confirm(
        env,
        env.wallet(anvilKeys.owner).writeContract({
          address: LOCAL_TEST_TOKEN_ADDRESS,
          abi: parseAbi(["function mint(address to, uint256 amount)"]),
          functionName: "mint",
          args: [account.address, 1_000n * 10n ** 6n],
        }),
      );
      const approve = encodeFunctionData({
        abi: erc20Abi,
        functionName: "approve",
        args: [stack(version).tokenPaymaster, maxUint256],
      });
      const calls = [{ to: LOCAL_TEST_TOKEN_ADDRESS, value: 0n, data: approve }, transferNothing()];
      await estimateAndMine(
        version,
        await draft(version, account, calls, { sponsor: await token(version) }),
        "ERC20 first operation",
        t,
      );
    });

    test("a call that reverts is an OperationRevertedError with the revert's reason", async () => {
      const d = await draft(version, await simpleAccount(version), [tokenTransfer(1n)]);
      await assert.rejects(
        simulateOperationGasV07(env.publicClient, version, stack(version).entryPoint, d.op),
        (error) =>
          error instanceof OperationRevertedError &&
          /call reverts: ERC20: transfer amount exceeds balance/.test(error.message),
      );
    });

    test("a bad nonce is an OperationRevertedError naming AA25", async () => {
      const d = await draft(version, await simpleAccount(version), [transferNothing()]);
      await assert.rejects(
        simulateOperationGasV07(env.publicClient, version, stack(version).entryPoint, { ...d.op, nonce: 7n }),
        (error) =>
          error instanceof OperationRevertedError && /fails validation: AA25 invalid account nonce/.test(error.message),
      );
    });
  });
}

test("a node that does not answer is an EstimationUnavailableError", async () => {
  const d = await draft("0.8", await simpleAccount("0.8"), [transferNothing()]);
  const closed = createPublicClient({ chain: env.viemChain, transport: http("http://127.0.0.1:1", { retryCount: 0 }) });
  await assert.rejects(
    simulateOperationGasV07(closed, "0.8", stack("0.8").entryPoint, d.op),
    (error) => error instanceof EstimationUnavailableError && /could not simulate/.test(error.message),
  );
});
