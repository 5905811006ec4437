// ERC20 mode on the embedded local chain: the token stack of src/devChain/tokenDeployment.ts (TokenPaymaster, the TUSD
// and TUSDC test tokens, an ETH/USD aggregator at 3,000 that prices both), made usable by the service: its key becomes
// the token paymaster's verifying signer, the SDK's approve-in-the-same-batch flow is allowed, and the price is fresh.
// The chain's configuration then lists both tokens, priced by the aggregator, unless the chains file gives 31337 tokens
// of its own.
import { type Address, isAddressEqual } from "viem";
import { fixedPriceAggregatorArtifact, tokenPaymasterArtifact } from "../bindings/paymasters/tokenArtifacts";
import { DEFAULT_TOKEN_MARKUP, type TokenConfig } from "../config";
import { confirm } from "./localBatch";
import type { ChainClients } from "./localDeployment";
import {
  addTokenPaymasterSigner,
  deployLocalTokenStack,
  LOCAL_PERMIT_TOKEN,
  LOCAL_PERMIT_TOKEN_ADDRESS,
  LOCAL_PRICE,
  LOCAL_PRICE_AGGREGATOR_ADDRESS,
  LOCAL_TEST_TOKEN,
  LOCAL_TEST_TOKEN_ADDRESS,
  LOCAL_TOKEN_PAYMASTER_ADDRESS,
} from "./tokenDeployment";

/**
 * The local chain's fee tokens, each at the local aggregator's price, 10 % markup, worth a dollar: TUSD, a plain ERC20,
 * and TUSDC, which has USDC's permit (the up-front token paymaster can run it in validation).
 */
export const LOCAL_TOKENS: readonly TokenConfig[] = (
  [
    [LOCAL_TEST_TOKEN_ADDRESS, LOCAL_TEST_TOKEN, false],
    [LOCAL_PERMIT_TOKEN_ADDRESS, LOCAL_PERMIT_TOKEN, true],
  ] as const
).map(([address, token, permit]) => ({
  address: address.toLowerCase(),
  symbol: token.symbol,
  decimals: token.decimals,
  price: { aggregator: LOCAL_PRICE_AGGREGATOR_ADDRESS.toLowerCase() },
  markup: DEFAULT_TOKEN_MARKUP,
  usdPrice: 1,
  ...(permit ? { permit: true } : {}),
}));

export interface LocalTokenSetup {
  /** The token contracts deployed by this call (none once they are on the chain). */
  deployed: string[];
  /** True when this call added the service's key to the token paymaster's signer set. */
  signerAdded: boolean;
  /** True when this call turned the contract's allowanceRequired off. */
  allowanceRequiredTurnedOff: boolean;
  /** True when this call re-dated the aggregator's answer (a restarted chain whose price had aged). */
  priceRefreshed: boolean;
}

/**
 * Deploys what is missing, makes `signer` the token paymaster's verifying signer, turns allowanceRequired off, and
 * re-dates the local price when half its allowed age has passed by the wall clock. `clients` must be the owner's
 * (anvil's first account). Every step skips what is already done.
 *
 * allowanceRequired off: the ERC20-mode client (docs/erc20-mode.md) prepends approve(tokenPaymaster, amount) to its
 * batch, which validation runs before, so it can only pass with the check off. The contract's owner then pays (from its
 * EntryPoint deposit, at most one signed maxCost per operation, recorded as TokenChargeFailed) for an operation whose
 * call reverts, which undoes the approval, or whose sender never approves. Acceptable on a local chain; a production
 * owner decides.
 */
export async function prepareLocalTokenStack(clients: ChainClients, signer: Address): Promise<LocalTokenSetup> {
  const stack = await deployLocalTokenStack(clients);
  const deployed = Object.entries({
    tokenPaymaster: stack.tokenPaymaster,
    testToken: stack.testToken,
    permitToken: stack.permitToken,
    priceAggregator: stack.priceAggregator,
  })
    .filter(([, outcome]) => outcome.deployed)
    .map(([name]) => name);
  const { changed: signerAdded } = await addTokenPaymasterSigner(clients, signer);
  const allowanceRequiredTurnedOff = await turnAllowanceRequiredOff(clients);
  const priceRefreshed = stack.priceRefreshed || (await refreshByWallClock(clients));
  return { deployed, signerAdded, allowanceRequiredTurnedOff, priceRefreshed };
}

const paymaster = { address: LOCAL_TOKEN_PAYMASTER_ADDRESS, abi: tokenPaymasterArtifact.abi } as const;
const feed = { address: LOCAL_PRICE_AGGREGATOR_ADDRESS, abi: fixedPriceAggregatorArtifact.abi } as const;

async function send(clients: ChainClients, request: Parameters<ChainClients["walletClient"]["writeContract"]>[0]) {
  const hash = await clients.walletClient.writeContract(request);
  await confirm(clients.publicClient, hash, `${request.functionName} on ${request.address}`);
}

async function turnAllowanceRequiredOff(clients: ChainClients): Promise<boolean> {
  if (!(await clients.publicClient.readContract({ ...paymaster, functionName: "allowanceRequired" }))) return false;
  const owner = await clients.publicClient.readContract({ ...paymaster, functionName: "owner" });
  if (!isAddressEqual(owner, clients.walletClient.account.address)) {
    throw new Error(`only the owner ${owner} of the token paymaster can turn allowanceRequired off`);
  }
  await send(clients, {
    ...paymaster,
    functionName: "setAllowanceRequired",
    args: [false],
    account: clients.walletClient.account,
    chain: clients.walletClient.chain,
  });
  return true;
}

/**
 * deployLocalTokenStack judges the price's age by the latest block, which on a chain loaded from a saved state is as
 * old as the save; the next block is dated now. Judged by the wall clock, such a price is re-dated here.
 */
async function refreshByWallClock(clients: ChainClients): Promise<boolean> {
  const { publicClient } = clients;
  const [[, answer, , updatedAt], maxPriceAge] = await Promise.all([
    publicClient.readContract({ ...feed, functionName: "latestRoundData" }),
    publicClient.readContract({ ...paymaster, functionName: "maxPriceAge" }),
  ]);
  const nowSeconds = BigInt(Math.floor(Date.now() / 1000));
  if (answer > 0n && updatedAt + BigInt(maxPriceAge) / 2n > nowSeconds) return false;
  await send(clients, {
    ...feed,
    functionName: "setAnswer",
    args: [answer > 0n ? answer : LOCAL_PRICE.answer],
    account: clients.walletClient.account,
    chain: clients.walletClient.chain,
  });
  return true;
}
