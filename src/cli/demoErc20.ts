// `npm run demo`, ERC20 part: a second new smart account that holds test tokens (TUSD) and no ether pays its own gas in
// TUSD through the token paymaster. The wallet's side of docs/erc20-mode.md: a fee quote, a batch that approves the
// token paymaster for the quoted maximum before its call, the service's signature in ERC20 mode, then handleOps.
import {
  type Account,
  type Address,
  type Chain,
  encodeFunctionData,
  erc20Abi,
  formatEther,
  formatUnits,
  type Hex,
  maxUint256,
  type PublicClient,
  parseEventLogs,
  parseUnits,
  type Transport,
  type WalletClient,
} from "viem";
import { entryPointAbi } from "../bindings/entryPoints/entryPoint";
import { tokenPaymasterArtifact } from "../bindings/paymasters/tokenArtifacts";
import { simpleAccountAbi } from "../devChain/simpleAccount";
import {
  LOCAL_TEST_TOKEN,
  LOCAL_TEST_TOKEN_ADDRESS,
  LOCAL_TOKEN_PAYMASTER_ADDRESS,
  mintTestTokens,
} from "../devChain/tokenDeployment";
import { newSimpleAccount, ownerSigned, type SponsoredGas, sendHandleOps } from "./demoOperationV06";
import { demoRpc } from "./demoRpc";

const MINTED = parseUnits("100", LOCAL_TEST_TOKEN.decimals);

export interface TokenDemoContext {
  baseUrl: string;
  chainId: number;
  apiKey: string;
  factory: Address;
  publicClient: PublicClient;
  /** Sends handleOps (and mints the test tokens, which anyone may). */
  bundler: WalletClient<Transport, Chain, Account>;
  /** The number of the first step printed. */
  firstStep: number;
  step(n: number, text: string): void;
  detail(text: string): void;
}

interface FeeQuote {
  symbol: string;
  decimal: number;
  maxGasFee: number;
  maxGasFeeUSD: number | null;
  exchangeRate: number;
  premiumPercentage: string;
  validUntil: number;
}

const rpc = <T>(context: TokenDemoContext, method: string, params: unknown[]): Promise<T> =>
  demoRpc<T>(context, method, params, " (ERC20 mode)");

/** Runs the token-paid operation, printing each step; returns the next step's number, throws when a step fails. */
export async function runTokenPaidDemo(context: TokenDemoContext): Promise<number> {
  const { publicClient, bundler, factory, step, detail } = context;
  let n = context.firstStep;
  const tusd = (value: bigint) => `${formatUnits(value, LOCAL_TEST_TOKEN.decimals)} ${LOCAL_TEST_TOKEN.symbol}`;

  const account = await newSimpleAccount(publicClient, factory);
  const { sender, created, initCode, createOther: call } = account;
  await mintTestTokens({ publicClient, walletClient: bundler }, sender, MINTED);
  step(n++, `ERC20 mode: smart account ${sender} (not deployed, no ether) given ${tusd(MINTED)}`);

  const quoted = await rpc<{ paymasterAddress: Address; feeQuotes: FeeQuote[] }>(context, "pm_getFeeQuoteOrData", [
    // The batch as it will be, its approve at a finite placeholder amount (an unlimited one would spare postOp the
    // allowance write, and quote a little low).
    {
      sender,
      nonce: "0x0",
      initCode,
      callData: batchCallData(LOCAL_TOKEN_PAYMASTER_ADDRESS, maxUint256 - 1n, call, factory),
      signature: "0x",
    },
    { mode: "ERC20", calculateGasLimits: true, tokenInfo: { preferredToken: LOCAL_TEST_TOKEN_ADDRESS } },
  ]);
  const tokenPaymaster = quoted.paymasterAddress;
  const [quote] = quoted.feeQuotes;
  if (!quote) throw new Error("pm_getFeeQuoteOrData quoted no TUSD fee");
  step(n++, `pm_getFeeQuoteOrData (ERC20): token paymaster ${tokenPaymaster}`);
  detail(
    `${quote.symbol}: maxGasFee ${quote.maxGasFee} (about $${quote.maxGasFeeUSD}), exchangeRate ${quote.exchangeRate} ` +
      `base units per ETH, premium ${quote.premiumPercentage} %, valid until ${new Date(quote.validUntil * 1000).toISOString()}`,
  );

  // What the SDK approves from a quote; the batch approves it, then makes the call.
  const approved = BigInt(Math.ceil(quote.maxGasFee * 10 ** quote.decimal));
  const callData = batchCallData(tokenPaymaster, approved, call, factory);
  const signed = await rpc<SponsoredGas>(context, "pm_sponsorUserOperation", [
    { sender, nonce: "0x0", initCode, callData, signature: "0x" },
    { mode: "ERC20", calculateGasLimits: true, tokenInfo: { feeTokenAddress: LOCAL_TEST_TOKEN_ADDRESS } },
  ]);
  step(
    n++,
    `pm_sponsorUserOperation (ERC20) for executeBatch([TUSD, factory], [approve ${tusd(approved)}, createAccount])`,
  );
  detail(
    `callGasLimit ${signed.callGasLimit}, verificationGasLimit ${signed.verificationGasLimit}, preVerificationGas ` +
      `${signed.preVerificationGas}; paymasterAndData ${(signed.paymasterAndData.length - 2) / 2} bytes`,
  );

  const { op } = await ownerSigned(publicClient, account, callData, signed);

  const paymaster = { address: tokenPaymaster, abi: tokenPaymasterArtifact.abi } as const;
  const balance = () =>
    publicClient.readContract({
      address: LOCAL_TEST_TOKEN_ADDRESS,
      abi: erc20Abi,
      functionName: "balanceOf",
      args: [sender],
    });
  const deposit = () => publicClient.readContract({ ...paymaster, functionName: "getDeposit" });
  const [balanceBefore, depositBefore] = await Promise.all([balance(), deposit()]);
  const { hash, receipt } = await sendHandleOps(publicClient, bundler, op);
  step(n++, `Signed by the owner and sent with handleOps: ${receipt.status} in block ${receipt.blockNumber}`);
  if (receipt.status !== "success") throw new Error(`handleOps reverted: ${hash}`);
  const [event] = parseEventLogs({ abi: entryPointAbi, eventName: "UserOperationEvent", logs: receipt.logs });
  const [charged] = parseEventLogs({ abi: paymaster.abi, eventName: "TokenCharged", logs: receipt.logs });
  if (!event?.args.success)
    throw new Error("the token-paid operation's call reverted (UserOperationEvent success false)");
  if (!charged) throw new Error("the token paymaster did not charge the account (no TokenCharged event)");
  const [balanceAfter, depositAfter] = await Promise.all([balance(), deposit()]);
  const deployed = ((await publicClient.getCode({ address: created })) ?? "0x") !== "0x";
  detail(
    `UserOperationEvent success: true, paymaster ${event.args.paymaster}; account ${created} deployed: ${deployed}`,
  );
  detail(
    `TUSD of the smart account: ${tusd(balanceBefore)} -> ${tusd(balanceAfter)} (paid ${tusd(charged.args.amount)}, ` +
      `at most ${tusd(approved)} quoted)`,
  );
  detail(
    `the token paymaster's EntryPoint deposit paid the gas: ${formatEther(depositBefore)} -> ${formatEther(depositAfter)} ` +
      `ETH (actualGasCost ${formatEther(event.args.actualGasCost)} ETH)`,
  );
  return n;
}

/** executeBatch([TUSD, factory], [approve(spender, amount), call]). */
function batchCallData(spender: Address, amount: bigint, call: Hex, factory: Address): Hex {
  return encodeFunctionData({
    abi: simpleAccountAbi,
    functionName: "executeBatch",
    args: [
      [LOCAL_TEST_TOKEN_ADDRESS, factory],
      [encodeFunctionData({ abi: erc20Abi, functionName: "approve", args: [spender, amount] }), call],
    ],
  });
}
