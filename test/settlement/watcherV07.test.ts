// Settlement across EntryPoints, on the local chain as the service starts it (the real EntryPoint v0.7 and v0.8 beside
// v0.6): a sponsorship recorded for a v0.7 and a v0.8 operation, written with the storage API as the RPC writes it, is
// settled to the actual cost once the operation is mined, its spending-limit reservation and deposit hold given back;
// an operation of our v0.7 token paymaster whose token pull fails in postOp is seen (PostOpRevertReason), counted
// and logged, its record settled as failed; and one of the up-front token paymaster whose refund a token refuses in
// postOp is settled as charged its whole prefund, refunded nothing, in the ledger, the events, the log and the counter.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { toSimpleSmartAccount } from "permissionless/accounts";
import {
  type Address,
  createWalletClient,
  type Hex,
  http,
  isAddressEqual,
  parseAbi,
  parseEther,
  parseEventLogs,
} from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { receiverBlockingTestTokenAbi } from "../../contracts/artifacts/ReceiverBlockingTestToken.abi";
import receiverBlockingTestTokenJson from "../../contracts/artifacts/ReceiverBlockingTestToken.json" with {
  type: "json",
};
import { entryPointV07Abi } from "../../src/bindings/entryPoints/entryPointV07";
import type { PackedUserOperation } from "../../src/bindings/entryPoints/packedUserOperation";
import { loadOwnArtifact } from "../../src/bindings/paymasters/ownArtifact";
import {
  encodePermitTokenPaymasterAndData,
  getPermitTokenPaymasterHash,
  PERMIT_TOKEN_PAYMASTER_POST_OP_GAS_LIMIT,
  PERMIT_TOKEN_PAYMASTER_VERIFICATION_GAS_LIMIT,
} from "../../src/bindings/paymasters/permitTokenPaymasterAndData";
import { maxTokenCostV07 } from "../../src/bindings/paymasters/tokenPaymasterAndDataV07";
import { CLOCK_SKEW_SECONDS } from "../../src/chain/clockSkew";
import { LOCAL_ENTRY_POINT_STACKS, LOCAL_TOKEN_PAYMASTER_ADDRESS } from "../../src/chain/localAddresses";
import type { LaterEntryPointVersion } from "../../src/config";
import type { Anvil } from "../../src/devChain/anvil";
import { LOCAL_TOKENS } from "../../src/devChain/localTokens";
import { simpleAccountAbi, simpleAccountFactoryAbi } from "../../src/devChain/simpleAccount";
import { createMetrics } from "../../src/metrics/metrics";
import { type Settlement, startSettlement } from "../../src/settlement/watcher";
import { OutstandingCharges } from "../../src/storage/outstandingCharges";
import { SponsorshipLog } from "../../src/storage/sponsorships";
import { erc20Outcome } from "../../src/tokens/erc20Terms";
import { anvilKeys } from "../contracts/fixtures";
import { handleOpsV07, signByAccountV07 } from "../contracts/v07/fixtures";
import {
  checkSponsored,
  confirm,
  type LocalStacks,
  prepareSponsored,
  startLocalStacks,
} from "../contracts/v07/localStacks";
import {
  approveCall,
  type Call,
  draftOperation,
  MARKUP,
  newAccount,
  quote,
  RATE,
  signByService,
  signedRateTerms,
  type TestAccount,
  TOKENS,
  type TokenChainV07,
} from "../contracts/v07/tokenFixtures";
import { addEndpoint } from "../events/helpers";
import { startEventReceiver } from "../events/receiver";
import type { Dapp, TestApp } from "../helpers/app";
import { startTestApp } from "../helpers/app";
import { addPolicy } from "../helpers/dappSetup";
import { eventually } from "../helpers/eventually";

let env: LocalStacks;
let t: TestApp;
let dapp: Dapp;
let policyId: string;
let settlement: Settlement;
let log: SponsorshipLog;
const metrics = createMetrics();
/** A token that can refuse a receiver, as USDC refuses a blacklisted one: the way an up-front refund fails. */
const receiverBlockingTestTokenArtifact = loadOwnArtifact(
  receiverBlockingTestTokenJson,
  "ReceiverBlockingTestToken",
  receiverBlockingTestTokenAbi,
);
const warnings: string[] = [];

before(async () => {
  env = await startLocalStacks();
  t = await startTestApp({
    signer: env.serviceSigner,
    // The local chain with its fee token, as the service runs it: every version's verifying and token paymaster.
    chains: new Map([[31337, { chainId: 31337, name: "local", rpcUrl: env.chain.rpcUrl, tokens: [...LOCAL_TOKENS] }]]),
  });
  dapp = await t.dapp();
  policyId = await addPolicy(t, dapp, "PAYMASTER_SA_LIMIT", {
    type: "PAYMASTER",
    cycleDuration: { value: 1, unit: "day" },
    threshold: 1,
    thresholdType: "NATIVE_ASSET",
  });
  log = new SponsorshipLog(t.db);
  settlement = startSettlement(t.ctx, {
    poll: false,
    metrics,
    log: { info: () => {}, warn: (message) => warnings.push(message) },
  });
});
after(async () => {
  await settlement?.stop();
  await t?.close();
  await env?.stop();
});

/** The token fixtures' view of the local chain: its v0.7 EntryPoint, factory and token paymaster, the test token. */
function tokenChainV07(): TokenChainV07 {
  const stack = LOCAL_ENTRY_POINT_STACKS["0.7"];
  return {
    ...env,
    anvil: { chainId: 31337 } as Anvil,
    version: "0.7",
    entryPoint: stack.entryPoint,
    factory: stack.simpleAccountFactory,
    paymaster: stack.tokenPaymaster,
    token: LOCAL_TOKENS[0]?.address as Address,
    serviceSigner: env.serviceSigner,
  } as unknown as TokenChainV07;
}

/**
 * A new account's v0.7 operation paid in the test token (1,000 of it minted), with `calls`, signed by the service
 * with today's terms and recorded as ERC20 mode records it (sponsored, its hash, nothing held against a deposit), then
 * sent with handleOps.
 */
async function tokenPaidOperation(calls: (chain: TokenChainV07) => Call[]) {
  const chain = tokenChainV07();
  const account = await newAccount(chain, TOKENS(1_000n));
  const draft = await draftOperation(chain, account, calls(chain));
  const op = await signByAccountV07(
    chain,
    await signByService(chain, draft.op, await quote(chain, draft)),
    account.owner,
  );
  const hash = await userOpHash("0.7", op);
  await log.record({
    paymasterId: dapp.paymasterId,
    chainId: 31337,
    sender: op.sender.toLowerCase(),
    nonce: op.nonce,
    sponsored: true,
    userOpHash: hash,
    ruleOutcomes: [],
    paymasterAddress: chain.paymaster.toLowerCase(),
    mode: "ERC20",
  });
  const receipt = await handleOpsV07(chain, [op], privateKeyToAccount(anvilKeys.bundler).address);
  return { op, hash, receipt };
}

/** A fresh ReceiverBlockingTestToken: a fee token the paymaster accepts at the signed rate, which can refuse a receiver. */
async function deployBlockingToken(): Promise<Address> {
  const receipt = await confirm(
    env,
    env.wallet(anvilKeys.owner).deployContract({
      abi: receiverBlockingTestTokenArtifact.abi,
      bytecode: receiverBlockingTestTokenArtifact.bytecode,
    }),
  );
  assert.ok(receipt.contractAddress);
  return receipt.contractAddress;
}

/**
 * The account deployed and its allowance to the up-front paymaster given beforehand, through the account's owner
 * (SimpleAccount lets it call execute): a SimpleAccount has no ERC-1271, so it cannot sign a permit instead.
 */
async function approveUpFront(chain: TokenChainV07, account: TestAccount): Promise<void> {
  const funder = env.wallet(anvilKeys.owner);
  await confirm(
    env,
    funder.writeContract({
      address: chain.factory,
      abi: simpleAccountFactoryAbi,
      functionName: "createAccount",
      args: [account.owner.address, 0n],
    }),
  );
  await confirm(env, funder.sendTransaction({ to: account.owner.address, value: parseEther("0.1") }));
  const ownerWallet = createWalletClient({
    account: account.owner,
    chain: env.viemChain,
    transport: http(env.chain.rpcUrl),
  });
  const approve = approveCall(chain, TOKENS(1_000n));
  await confirm(
    env,
    ownerWallet.writeContract({
      address: account.address,
      abi: simpleAccountAbi,
      functionName: "execute",
      args: [approve.to, 0n, approve.data],
    }),
  );
}

async function tokenBalanceOf(token: Address, owner: Address): Promise<bigint> {
  return env.publicClient.readContract({
    address: token,
    abi: receiverBlockingTestTokenArtifact.abi,
    functionName: "balanceOf",
    args: [owner],
  });
}

/** The up-front paymaster's failed refunds the counter holds for chain 31337 on v0.7. */
async function refundFailuresCounted(): Promise<number> {
  const { values } = await metrics.tokenChargeFailures.get();
  return values.find((value) => value.labels.version === "0.7" && value.labels.failed === "refund")?.value ?? 0;
}

/** What TokenPaymasterV07 logs in postOp: the charge it took. */
const tokenCharged = parseAbi([
  "event TokenCharged(address indexed sender, address indexed feeToken, bytes32 indexed userOpHash, uint256 amount, uint256 gasCost, uint256 exchangeRate, uint32 priceMarkup)",
]);

/** What the v0.7 worst case reserves: every gas limit of the packed operation at maxFeePerGas. */
function worstCase(op: PackedUserOperation): bigint {
  const high = (word: Hex) => BigInt(word) >> 128n;
  const low = (word: Hex) => BigInt(word) & ((1n << 128n) - 1n);
  const paymasterLimits = BigInt(`0x${op.paymasterAndData.slice(42, 106)}`);
  const paymasterVerification = paymasterLimits >> 128n;
  const paymasterPostOp = paymasterLimits & ((1n << 128n) - 1n);
  const gas =
    high(op.accountGasLimits) +
    low(op.accountGasLimits) +
    op.preVerificationGas +
    paymasterVerification +
    paymasterPostOp;
  return gas * low(op.gasFees);
}

async function userOpHash(version: LaterEntryPointVersion, op: PackedUserOperation): Promise<Hex> {
  return env.publicClient.readContract({
    address: LOCAL_ENTRY_POINT_STACKS[version].entryPoint,
    abi: entryPointV07Abi,
    functionName: "getUserOpHash",
    args: [op],
  });
}

/** The record the RPC writes for a sponsored v0.7/v0.8 operation, with its limit reservation and its deposit hold. */
async function recordSponsored(version: LaterEntryPointVersion, op: PackedUserOperation, maxCharge: bigint) {
  const nowSeconds = Math.floor(Date.now() / 1000);
  const outcome = await log.record(
    {
      paymasterId: dapp.paymasterId,
      chainId: 31337,
      sender: op.sender.toLowerCase(),
      nonce: op.nonce,
      sponsored: true,
      userOpHash: await userOpHash(version, op),
      validUntil: nowSeconds + 300,
      validAfter: nowSeconds - CLOCK_SKEW_SECONDS,
      ruleOutcomes: [],
      fundingAddress: env.fundingWallet.toLowerCase(),
      paymasterAddress: LOCAL_ENTRY_POINT_STACKS[version].verifyingPaymaster.toLowerCase(),
      maxCharge,
    },
    {
      rule: "spendingLimits",
      reservations: [
        {
          policyId,
          // A cycle begun before the signature: the one settlement finds it in.
          cycleStartMs: Date.now() - 1_000,
          scopeKey: "",
          sender: op.sender.toLowerCase(),
          nonce: op.nonce,
          amount: worstCase(op),
          threshold: 10n ** 18n,
          validUntil: nowSeconds + 300,
        },
      ],
      refusal: () => "full",
    },
  );
  assert.deepEqual(outcome, { ok: true });
}

interface Row {
  actual_cost: string | null;
  actual_gas_used: string | null;
  success: boolean | null;
  tx_hash: string | null;
  settled_at: Date | null;
}

async function row(sender: Address): Promise<Row | undefined> {
  const [found] = await t.db.query<Row>(
    `SELECT actual_cost::text AS actual_cost, actual_gas_used::text AS actual_gas_used, success, tx_hash, settled_at
     FROM sponsorships WHERE sender = $1`,
    [sender.toLowerCase()],
  );
  return found;
}

async function limitState(): Promise<{ used: bigint; reservations: number }> {
  const [usage] = await t.db.query<{ used: string }>(
    "SELECT COALESCE(SUM(used), 0)::text AS used FROM limit_usage WHERE policy_id = $1",
    [policyId],
  );
  const [held] = await t.db.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM limit_reservations WHERE policy_id = $1",
    [policyId],
  );
  return { used: BigInt(usage?.used ?? "0"), reservations: held?.n ?? 0 };
}

const outstanding = (version: LaterEntryPointVersion) =>
  new OutstandingCharges(t.db).of({
    chainId: 31337,
    paymasterAddress: LOCAL_ENTRY_POINT_STACKS[version].verifyingPaymaster.toLowerCase(),
    fundingAddress: env.fundingWallet.toLowerCase(),
    notBefore: 0,
  });

describe("settlement on EntryPoint v0.7 and v0.8", () => {
  test("the watcher reads every EntryPoint of the chain, with our verifying and both token paymasters on each", () => {
    const [chain] = settlement.chains;
    assert.ok(chain);
    assert.deepEqual(
      chain.entryPoints.map((entry) => [
        entry.version,
        entry.entryPoint,
        entry.paymasters,
        entry.tokenPaymaster,
        entry.permitTokenPaymaster,
      ]),
      [
        [
          "0.6",
          env.chain.info.entryPoint,
          [env.chain.info.verifyingPaymaster, LOCAL_TOKEN_PAYMASTER_ADDRESS],
          undefined,
          undefined,
        ],
        ...(["0.7", "0.8", "0.9"] as const).map((version) => {
          const stack = LOCAL_ENTRY_POINT_STACKS[version];
          // Both token paymasters' reverted postOps (PostOpRevertReason) are reported: a failed charge, a failed refund.
          const paymasters = [stack.verifyingPaymaster, stack.tokenPaymaster, stack.permitTokenPaymaster];
          return [version, stack.entryPoint, paymasters, stack.tokenPaymaster, stack.permitTokenPaymaster];
        }),
      ],
    );
  });

  let spent = 0n;
  for (const version of ["0.7", "0.8"] as const) {
    test(`a sponsored v${version} operation is settled to its actual cost, its reservation and hold given back`, async (t_) => {
      const account = await toSimpleSmartAccount({
        client: env.publicClient,
        owner: privateKeyToAccount(generatePrivateKey()),
        entryPoint: { address: LOCAL_ENTRY_POINT_STACKS[version].entryPoint, version },
      });
      const prepared = await prepareSponsored(env, version, account);
      const maxCharge = worstCase(prepared.packed);
      await recordSponsored(version, prepared.packed, maxCharge);
      assert.deepEqual(await limitState(), { used: spent + maxCharge, reservations: 1 });
      assert.equal(await outstanding(version), maxCharge);

      const receipt = await confirm(
        env,
        env.wallet(anvilKeys.bundler).writeContract({
          address: LOCAL_ENTRY_POINT_STACKS[version].entryPoint,
          abi: entryPointV07Abi,
          functionName: "handleOps",
          args: [[prepared.packed], privateKeyToAccount(anvilKeys.bundler).address],
        }),
      );
      const outcome = await checkSponsored(env, version, prepared, receipt.logs);

      const [pass] = await settlement.settleOnce();
      assert.equal(pass?.settled, 1);
      assert.equal(pass?.reservations, 1);
      assert.equal(pass?.toBlock, receipt.blockNumber);
      const settled = await row(prepared.sender);
      assert.equal(settled?.actual_cost, outcome.actualGasCost.toString());
      assert.equal(settled?.actual_gas_used, outcome.actualGasUsed.toString());
      assert.equal(settled?.success, true);
      assert.equal(settled?.tx_hash, receipt.transactionHash);
      assert.ok(settled?.settled_at instanceof Date);
      // The limit now counts the actual cost instead of the worst case, and nothing is held against the deposit.
      spent += outcome.actualGasCost;
      assert.deepEqual(await limitState(), { used: spent, reservations: 0 });
      assert.equal(await outstanding(version), 0n);
      t_.diagnostic(`v${version}: worst case ${maxCharge} wei, actual ${outcome.actualGasCost} wei`);
    });
  }

  test("a v0.7 token-paid operation, mined and charged, gives sponsorship.included with the charge its paymaster logged", async () => {
    const receiver = await startEventReceiver(() => t.ctx.now());
    const endpoint = await addEndpoint(t, dapp, receiver.url, ["sponsorship.included"]);
    receiver.secrets.push(endpoint.secret);
    try {
      // Tokens and the approve in its own calls: postOp's transferFrom takes the charge.
      const { hash, receipt } = await tokenPaidOperation((chain) => [approveCall(chain, TOKENS(1_000n))]);
      const [event] = parseEventLogs({ abi: entryPointV07Abi, logs: receipt.logs, eventName: "UserOperationEvent" });
      const [charged] = parseEventLogs({ abi: tokenCharged, logs: receipt.logs, eventName: "TokenCharged" });
      assert.ok(event?.args.success, "the operation ran");
      assert.ok(charged && charged.args.amount > 0n, "the token paymaster took a charge");

      await settlement.settleOnce();
      const [included] = await eventually(
        "sponsorship.included delivered",
        () => receiver.accepted().filter((delivered) => delivered.data.userOpHash === hash),
        (delivered) => delivered.length >= 1,
      );
      assert.equal(included?.type, "sponsorship.included");
      assert.equal(included?.data.actualGasCost, event.args.actualGasCost.toString());
      assert.deepEqual(included?.data.tokenCharge, {
        feeToken: charged.args.feeToken.toLowerCase(),
        amount: charged.args.amount.toString(),
        exchangeRate: charged.args.exchangeRate.toString(),
      });
      assert.ok(
        receiver.received.every((delivery) => delivery.verifiedBy.length === 1),
        "every delivery verifies",
      );
    } finally {
      await t.call("DELETE", `event-endpoints/${endpoint.id}`, { token: dapp.token, apiKey: dapp.apiKey });
      await receiver.close();
    }
  });

  test("a v0.7 token-paid operation whose token pull fails in postOp is seen, counted, logged and settled as failed", async () => {
    const stack = LOCAL_ENTRY_POINT_STACKS["0.7"];
    // Tokens enough for validation's balance check, but no approve: postOp's transferFrom has no allowance to use.
    const { op, hash, receipt } = await tokenPaidOperation(() => []);
    const [event] = parseEventLogs({ abi: entryPointV07Abi, logs: receipt.logs, eventName: "UserOperationEvent" });
    assert.ok(event && isAddressEqual(event.args.paymaster, stack.tokenPaymaster));
    assert.equal(event.args.success, false);
    assert.equal(
      parseEventLogs({ abi: entryPointV07Abi, logs: receipt.logs, eventName: "PostOpRevertReason" }).length,
      1,
    );

    const [pass] = await settlement.settleOnce();
    assert.equal(pass?.settled, 1);
    assert.equal(pass?.tokenChargeFailures, 1);
    const settled = await row(op.sender);
    assert.equal(settled?.success, false);
    assert.equal(settled?.actual_cost, event.args.actualGasCost.toString());

    const counted = (await metrics.tokenChargeFailures.get()).values;
    assert.deepEqual(
      counted.map((value) => [value.labels, value.value]),
      [[{ chain_id: "31337", version: "0.7", failed: "charge" }, 1]],
    );
    const warning = warnings.find((message) => message.includes(hash));
    assert.ok(warning, `no warning names ${hash}: ${warnings.join("\n")}`);
    assert.ok(warning.includes(op.sender), "the warning names the sender");
    // The token's own reason, decoded out of the EntryPoint's PostOpReverted wrapper.
    assert.match(warning, /: ERC20: insufficient allowance; /);
  });

  test("a v0.7 operation of the up-front token paymaster whose refund is refused in postOp is settled with the whole prefund charged", async () => {
    const paymaster = LOCAL_ENTRY_POINT_STACKS["0.7"].permitTokenPaymaster;
    const receiver = await startEventReceiver(() => t.ctx.now());
    const endpoint = await addEndpoint(t, dapp, receiver.url, ["sponsorship.included", "sponsorship.reverted"]);
    receiver.secrets.push(endpoint.secret);
    try {
      const token = await deployBlockingToken();
      const chain = { ...tokenChainV07(), token, paymaster };
      const account = await newAccount(chain, TOKENS(1_000n));
      await approveUpFront(chain, account);
      // From now on the token refuses what is sent to the sender: validation still takes the prefund from it, and
      // postOp's refund to it reverts.
      await confirm(
        env,
        env.wallet(anvilKeys.owner).writeContract({
          address: token,
          abi: receiverBlockingTestTokenArtifact.abi,
          functionName: "blockReceiver",
          args: [account.address],
        }),
      );
      const draft = await draftOperation(chain, account, [], {
        paymasterVerificationGasLimit: PERMIT_TOKEN_PAYMASTER_VERIFICATION_GAS_LIMIT,
        paymasterPostOpGasLimit: PERMIT_TOKEN_PAYMASTER_POST_OP_GAS_LIMIT,
      });
      const terms = await signedRateTerms(chain);
      const context = { ...terms, ...draft.limits, chainId: 31337, paymaster };
      const signature = await env.serviceSigner.signHash(getPermitTokenPaymasterHash(draft.op, context));
      const op = await signByAccountV07(
        chain,
        { ...draft.op, paymasterAndData: encodePermitTokenPaymasterAndData({ ...context, signature }) },
        account.owner,
      );
      const hash = await userOpHash("0.7", op);
      // The prefund the contract takes: every gas limit at maxFeePerGas, in tokens at the signed rate and markup.
      const prefund = maxTokenCostV07(draft.limits, RATE, MARKUP);
      const feeToken = { address: token.toLowerCase(), symbol: "RBTT", decimals: 6, price: { fixedRate: RATE } };
      await log.record({
        paymasterId: dapp.paymasterId,
        chainId: 31337,
        sender: op.sender.toLowerCase(),
        nonce: op.nonce,
        sponsored: true,
        userOpHash: hash,
        ruleOutcomes: [erc20Outcome({ ...feeToken, markup: MARKUP }, terms, prefund)],
        paymasterAddress: paymaster.toLowerCase(),
        mode: "ERC20",
      });

      const receipt = await handleOpsV07(chain, [op], privateKeyToAccount(anvilKeys.bundler).address);
      const [event] = parseEventLogs({ abi: entryPointV07Abi, logs: receipt.logs, eventName: "UserOperationEvent" });
      const [postOpRevert] = parseEventLogs({
        abi: entryPointV07Abi,
        logs: receipt.logs,
        eventName: "PostOpRevertReason",
      });
      assert.ok(event && isAddressEqual(event.args.paymaster, paymaster));
      assert.equal(event.args.success, false);
      assert.ok(postOpRevert, "the EntryPoint reports the postOp revert");
      // Nothing came back: the paymaster holds the whole prefund, and logged no TokenCharged.
      assert.equal(await tokenBalanceOf(token, paymaster), prefund);
      assert.equal(await tokenBalanceOf(token, account.address), TOKENS(1_000n) - prefund);
      assert.equal(
        receipt.logs.filter((entry) => isAddressEqual(entry.address, paymaster)).length,
        0,
        "the paymaster logged nothing",
      );

      const failuresBefore = await refundFailuresCounted();
      const [pass] = await settlement.settleOnce();
      assert.equal(pass?.settled, 1);
      assert.equal(pass?.tokenChargeFailures, 1);
      const words = "the refund failed; the whole prefund was kept: ReceiverBlockingTestToken: receiver is blocked";

      // The ledger: charged the prefund, refunded nothing.
      const stored = await t.call("GET", "sponsorships", {
        token: dapp.token,
        apiKey: dapp.apiKey,
        query: { sender: op.sender.toLowerCase() },
      });
      assert.equal(stored.status, 200, JSON.stringify(stored.body));
      const [ledgerRow] = stored.body.data as { status: string; token: Record<string, unknown> }[];
      assert.equal(ledgerRow?.status, "mined");
      assert.deepEqual(ledgerRow?.token, {
        feeToken: token.toLowerCase(),
        symbol: "RBTT",
        decimals: 6,
        maxCharge: prefund.toString(),
        charge: prefund.toString(),
        refund: "0",
      });

      // The events: included with that charge, then reverted for the refund, with the token's reason.
      const delivered = await eventually(
        "sponsorship.included and sponsorship.reverted delivered",
        () => receiver.accepted().filter((entry) => entry.data.userOpHash === hash),
        (entries) => entries.length >= 2,
      );
      const included = delivered.find((entry) => entry.type === "sponsorship.included");
      const reverted = delivered.find((entry) => entry.type === "sponsorship.reverted");
      assert.deepEqual(included?.data.tokenCharge, {
        feeToken: token.toLowerCase(),
        amount: prefund.toString(),
        exchangeRate: RATE.toString(),
        refund: "0",
        refundFailure: words,
      });
      assert.equal(reverted?.data.failed, "refund");
      assert.equal(reverted?.data.reason, words);

      // The log line and the counter the approve-in-batch paymaster's failed charges have, told apart.
      const warning = warnings.find((message) => message.includes(hash));
      assert.ok(warning, `no warning names ${hash}: ${warnings.join("\n")}`);
      assert.ok(warning.includes(op.sender), "the warning names the sender");
      assert.ok(warning.includes(words), warning);
      assert.equal((await refundFailuresCounted()) - failuresBefore, 1);
    } finally {
      await t.call("DELETE", `event-endpoints/${endpoint.id}`, { token: dapp.token, apiKey: dapp.apiKey });
      await receiver.close();
    }
  });
});
