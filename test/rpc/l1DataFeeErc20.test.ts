// ERC20 mode on an OP-stack chain: the L1 data fee reaches the token figures. anvil runs in OP mode with Base's chain
// id (8453), so the chains file need not name the model, and every transaction's sender pays the L1 fee of its bytes.
// A new SimpleAccount on EntryPoint v0.7, holding only a test token, asks for a quote with the gas left out; it exceeds
// the same quote from a service told the chain has no L1 fee by at least the L1 part's cost. Then the operation is
// sponsored (the gas estimated again), signed by the account, and sent alone with handleOps at its own fees from a
// fresh submitter: it runs; the account's tokens fall by no more than the quote, yet by at least what the submitter
// spent, gas and L1 fee; and the submitter is paid back in full by the EntryPoint out of the token paymaster's deposit.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { toSimpleSmartAccount } from "permissionless/accounts";
import {
  type Address,
  encodeFunctionData,
  erc20Abi,
  type Hex,
  isAddressEqual,
  parseEther,
  parseEventLogs,
  parseUnits,
} from "viem";
import {
  formatUserOperationRequest,
  toPackedUserOperation,
  type UserOperation as ViemOperation,
} from "viem/account-abstraction";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { entryPointV07Abi } from "../../src/bindings/entryPoints/entryPointV07";
import { testTokenArtifact } from "../../src/bindings/paymasters/tokenArtifacts";
import { tokenAmountForWei } from "../../src/bindings/paymasters/tokenPaymasterAndData";
import { anvilKeys } from "../contracts/fixtures";
import type { Dapp, TestApp } from "../helpers/app";
import { TARGET } from "../helpers/chainApp";
import { appFromChainsEntry } from "../helpers/chainsFileApp";
import { rpc } from "../helpers/dappSetup";
import {
  deployPaymasterStacks,
  L1_FEE_VAULT_ADDRESS,
  type OpStackChain,
  type PaymasterStacks,
  startOpStackChain,
} from "../helpers/l2Chains";
import { withAnsweredFieldsV07 } from "../helpers/userOps";

const CHAIN_ID = 8453;
const DECIMALS = 6;
/** A fixed rate, signed as it is: 3,000 tokens (six decimals) per ether. */
const RATE = 3_000n * 10n ** BigInt(DECIMALS);
/** 10 % on top of the gas cost, in millionths. */
const MARKUP = 1_100_000;
/** What the account holds before its first operation, and approves the token paymaster for in its batch: 100 tokens. */
const MINTED = 100n * 10n ** BigInt(DECIMALS);
/**
 * The chains file accepts fee tokens only beside a v0.6 token paymaster, and deployPaymasterStacks deploys v0.7's and
 * later ones only. No v0.6 operation is sent here, so an address with no code fills the field.
 */
const NO_V06_TOKEN_PAYMASTER: Address = "0x00000000000000000000000000000000000006e6";

const serviceKey = generatePrivateKey();

let chain: OpStackChain;
let stacks: PaymasterStacks;
let token: Address;
/** The service as the chains file configures it on Base (the chain id's model), and one told the chain has none. */
let priced: { t: TestApp; dapp: Dapp };
let unaware: { t: TestApp; dapp: Dapp };

const stack = () => stacks.later["0.7"];

async function service(extra: Record<string, unknown>) {
  const entry = {
    chainId: CHAIN_ID,
    name: "Base (anvil in OP mode)",
    rpcUrl: chain.anvil.rpcUrl,
    tokenPaymaster: NO_V06_TOKEN_PAYMASTER,
    tokens: [
      { address: token, symbol: "TUSD", decimals: DECIMALS, price: { fixedRate: RATE.toString() }, markup: MARKUP },
    ],
    entryPoints: { "0.7": { tokenPaymaster: stack().tokenPaymaster } },
    ...extra,
  };
  const t = await appFromChainsEntry(entry, serviceKey);
  // ERC20 mode needs no funding wallet or rule: a bare dApp's apiKey names the chain.
  return { t, dapp: await t.dapp({ chainId: CHAIN_ID }) };
}

before(async () => {
  chain = await startOpStackChain({ chainId: CHAIN_ID });
  // The v0.7 token paymaster comes funded, staked and signed for by the service's key.
  stacks = await deployPaymasterStacks(chain, privateKeyToAccount(serviceKey).address);
  const owner = chain.wallet(anvilKeys.owner);
  const hash = await owner.deployContract({
    abi: testTokenArtifact.abi,
    bytecode: testTokenArtifact.bytecode,
    args: ["Test USD", "TUSD", DECIMALS],
  });
  const deployed = (await chain.publicClient.waitForTransactionReceipt({ hash })).contractAddress;
  assert.ok(deployed, "the test token was deployed");
  token = deployed;
  priced = await service({});
  unaware = await service({ l1DataFee: "none" });
});

after(async () => {
  try {
    await priced?.t.close();
    await unaware?.t.close();
  } finally {
    await chain?.anvil.stop();
  }
});

const tokenBalance = (owner: Address) =>
  chain.publicClient.readContract({ address: token, abi: erc20Abi, functionName: "balanceOf", args: [owner] });

/** The most a quote says the operation can cost, in token base units; the spender it names must be v0.7's. */
async function quotedMaximum(app: { t: TestApp; dapp: Dapp }, op: Record<string, unknown>) {
  const reply = await rpc(app.t, app.dapp, "pm_getFeeQuoteOrData", [op, stack().entryPoint, { token }]);
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  const result = reply.body.result as { paymasterAddress: Address; feeQuotes: { maxGasFee: number }[] };
  assert.ok(result, JSON.stringify(reply.body));
  const [quote, ...others] = result.feeQuotes;
  assert.ok(quote && others.length === 0, JSON.stringify(result));
  assert.ok(isAddressEqual(result.paymasterAddress, stack().tokenPaymaster), "v0.7's token paymaster is the spender");
  // maxGasFee is in whole tokens; back to base units, exact at six decimals.
  return parseUnits(String(quote.maxGasFee), DECIMALS);
}

/** The L1 part the ledger recorded for the sender's sponsorship. */
async function ledgerL1Gas(sender: Address): Promise<bigint> {
  const reply = await priced.t.call("GET", "sponsorships", { token: priced.dapp.token, apiKey: priced.dapp.apiKey });
  const rows = reply.body.data as { sender: string; mode: string; l1DataGas: string | null }[];
  const row = rows.find((candidate) => candidate.sender === sender.toLowerCase());
  assert.ok(row, `a ledger row for ${sender}`);
  assert.equal(row.mode, "ERC20");
  assert.ok(row.l1DataGas !== null, "the service estimated the gas, so it recorded the L1 part");
  return BigInt(row.l1DataGas);
}

/**
 * handleOps([op], submitter) sent from a fresh key at the operation's fees, as a bundler would send it alone. `gained`
 * is the EntryPoint's payment to the submitter less what the submitter spent: the gas, and the L1 fee (`l1Fee`, which
 * OP mode moves to its vault).
 */
async function submitAlone(op: ViemOperation<"0.7">, fees: { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint }) {
  const key = generatePrivateKey();
  const address = privateKeyToAccount(key).address;
  await chain.testClient.setBalance({ address, value: parseEther("1") });
  const vaultBefore = await chain.publicClient.getBalance({ address: L1_FEE_VAULT_ADDRESS });
  const data = encodeFunctionData({
    abi: entryPointV07Abi,
    functionName: "handleOps",
    args: [[toPackedUserOperation(op)], address],
  });
  const hash = await chain.wallet(key).sendTransaction({ to: stack().entryPoint, data, ...fees });
  const receipt = await chain.publicClient.waitForTransactionReceipt({ hash });
  assert.equal(receipt.status, "success");
  const gained = (await chain.publicClient.getBalance({ address })) - parseEther("1");
  const l1Fee = (await chain.publicClient.getBalance({ address: L1_FEE_VAULT_ADDRESS })) - vaultBefore;
  return { receipt, gained, l1Fee };
}

test("ERC20 mode, EntryPoint v0.7: the quote and the token charge carry the L1 data fee", async (t) => {
  const account = await toSimpleSmartAccount({
    client: chain.publicClient,
    owner: privateKeyToAccount(generatePrivateKey()),
    entryPoint: { address: stack().entryPoint, version: "0.7" },
    factoryAddress: stack().simpleAccountFactory,
  });
  const mint = await chain.wallet(anvilKeys.owner).writeContract({
    address: token,
    abi: testTokenArtifact.abi,
    functionName: "mint",
    args: [account.address, MINTED],
  });
  await chain.publicClient.waitForTransactionReceipt({ hash: mint });
  const baseFee = (await chain.publicClient.getBlock()).baseFeePerGas ?? 0n;
  const fees = { maxPriorityFeePerGas: 1_000_000n, maxFeePerGas: 2n * baseFee + 1_000_000n };
  // The operation's price, min(maxFeePerGas, baseFee + tip), here the latter: what the EntryPoint pays per gas, and
  // what the service divides the L1 fee by to put it in gas.
  const price = baseFee + fees.maxPriorityFeePerGas;
  // The account approves the token paymaster in its own batch: validation reads the balance only, postOp pulls.
  const approve = encodeFunctionData({
    abi: erc20Abi,
    functionName: "approve",
    args: [stack().tokenPaymaster, MINTED],
  });
  const op = {
    sender: account.address,
    nonce: 0n,
    ...(await account.getFactoryArgs()),
    callData: await account.encodeCalls([
      { to: token, value: 0n, data: approve },
      { to: TARGET, value: 0n },
    ]),
    ...fees,
  };
  // No gas values: the service estimates them, and with them the L1 part.
  const request = formatUserOperationRequest({ ...op, signature: await account.getStubSignature() });

  let withL1 = 0n;
  let withoutL1 = 0n;
  await t.test("the quote's maximum is the same quote without the L1 part, plus that part", async (t) => {
    withL1 = await quotedMaximum(priced, request);
    withoutL1 = await quotedMaximum(unaware, request);
    // The prefund counts preVerificationGas at maxFeePerGas, so the difference is the L1 part's gas at that fee.
    const asGas = ((withL1 - withoutL1) * 10n ** 24n) / (fees.maxFeePerGas * RATE * BigInt(MARKUP));
    t.diagnostic(
      `quote with the L1 part ${withL1}, without ${withoutL1} token units: ${withL1 - withoutL1} more, ` +
        `${asGas} gas at maxFeePerGas ${fees.maxFeePerGas} wei`,
    );
    // Not a rounding matter: at the helper's L1 fees the L1 part adds over a quarter to the whole maximum.
    assert.ok(withL1 - withoutL1 > withoutL1 / 4n, "the L1 part raises the quote by a large share");
  });

  await t.test("the mined operation's token charge stays within the quote; the submitter is made whole", async (t) => {
    const reply = await rpc(priced.t, priced.dapp, "pm_sponsorUserOperation", [request, stack().entryPoint, { token }]);
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    const answer = reply.body.result as Record<string, Hex>;
    assert.ok(answer, JSON.stringify(reply.body));
    const full: ViemOperation<"0.7"> = withAnsweredFieldsV07(op, answer);
    assert.ok(isAddressEqual(full.paymaster as Address, stack().tokenPaymaster), "signed for v0.7's token paymaster");
    const l1DataGas = await ledgerL1Gas(op.sender);
    assert.ok(l1DataGas > 0n, "the ledger has the L1 part");
    assert.ok(full.preVerificationGas > l1DataGas, "the L1 part is inside preVerificationGas");
    assert.ok(2n * l1DataGas > full.preVerificationGas, "and is most of it, at the helper's L1 fees");
    // The quote's extra over the one without the L1 part pays for at least that part at the operation's price.
    const l1Cost = tokenAmountForWei(l1DataGas * price, RATE, MARKUP);
    assert.ok(withL1 >= withoutL1 + l1Cost, `quote ${withL1} < ${withoutL1} + the L1 part ${l1Cost}`);

    const signed = { ...full, signature: await account.signUserOperation(full) };
    const { receipt, gained, l1Fee } = await submitAlone(signed, fees);
    const [event] = parseEventLogs({ abi: entryPointV07Abi, logs: receipt.logs, eventName: "UserOperationEvent" });
    assert.equal(event?.args.success, true, "the operation ran");
    const charged = MINTED - (await tokenBalance(op.sender));
    const spent = receipt.gasUsed * receipt.effectiveGasPrice + l1Fee;
    t.diagnostic(
      `preVerificationGas ${full.preVerificationGas}, of which L1 ${l1DataGas} (${l1Cost} token units at ` +
        `${price} wei per gas); handleOps used ${receipt.gasUsed} gas at ${receipt.effectiveGasPrice} wei and paid ` +
        `an L1 fee of ${l1Fee} wei; charged ${charged} token units of at most ${withL1} quoted; the submitter ` +
        `gained ${gained} wei`,
    );
    assert.ok(l1Fee > 0n, "the chain charged the submitter an L1 fee");
    assert.ok(charged <= withL1, `charged ${charged}, quoted at most ${withL1}`);
    assert.ok(gained >= 0n, `the submitter lost ${-gained} wei`);
    // The user paid, in tokens, at least what the submitter spent, the L1 fee included.
    const spentInTokens = tokenAmountForWei(spent, RATE, MARKUP);
    assert.ok(charged >= spentInTokens, `charged ${charged}, the submitter spent ${spentInTokens} in tokens`);
  });
});
