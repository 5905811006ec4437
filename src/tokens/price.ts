// A fee token's exchange rate, in the unit the token paymaster signs and charges: fee-token base units per 1e18 wei.
//
//   fixedRate    the configured rate, signed as it is (priceSource 0); it never goes stale.
//   aggregator   a Chainlink-style feed (AggregatorV3Interface: whole tokens per whole native token, with the feed's
//                decimals), read through the chain's RPC with the contract's own formula (oracleExchangeRate), so the
//                quote is what the contract will compute. The operation is signed with priceSource 1: the contract
//                reads the same feed again when the operation runs, and cuts the validity window to
//                updatedAt + its maxPriceAge. A zero, negative, unfinished or stale answer is refused here, before
//                anything is signed.
import {
  type Address,
  BaseError,
  ContractFunctionRevertedError,
  ContractFunctionZeroDataError,
  type PublicClient,
  parseAbi,
  zeroAddress,
} from "viem";
import { aggregatorAbi } from "../abi/aggregatorAbi";
import { oracleExchangeRate, PRICE_SOURCE, type PriceSource } from "../bindings/paymasters/tokenPaymasterAndData";
import { CHAIN_RPC_TIMEOUT_MS, chainClient } from "../chain/chainClient";
import type { SponsoringChain } from "../chain/sponsoringChains";
import type { TokenConfig } from "../config";
import { describeTransportError } from "../gasEstimation/gasEstimationErrors";

export interface TokenPrice {
  priceSource: PriceSource;
  /** Fee-token base units per 1e18 wei: the configured rate, or the aggregator's answer as the contract converts it. */
  exchangeRate: bigint;
  /** The feed the contract reads (priceSource 1); the zero address for a fixed rate. */
  oracleAggregator: Address;
  /** The last second this price may be used (the feed's updatedAt + the allowed age); none for a fixed rate. */
  validUntil?: number;
}

/** The token cannot be priced now, and asking again soon will not change that: a zero, unfinished or stale answer. */
export class PriceUnavailableError extends Error {
  override name = "PriceUnavailableError";
}

/** The chain's node could not be asked (unreachable, too slow): a retry may succeed. */
export class PriceReadError extends Error {
  override name = "PriceReadError";
}

/** The same read on the feed and on the token (ERC20 metadata). */
const decimalsAbi = parseAbi(["function decimals() view returns (uint8)"]);
const tokenPaymasterAbi = parseAbi(["function maxPriceAge() view returns (uint48)"]);

/** How long the token paymaster's maxPriceAge is reused: its owner may change it, rarely. */
const MAX_PRICE_AGE_TTL_MS = 60_000;

/** Decimals never change: read once per chain RPC and contract (a failed read is not kept). */
const decimalsCache = new Map<string, Promise<number>>();
const maxPriceAgeCache = new Map<string, { at: number; read: Promise<number> }>();

function cachedDecimals(client: PublicClient, rpcUrl: string, address: Address) {
  const key = `${rpcUrl}|${address.toLowerCase()}`;
  let read = decimalsCache.get(key);
  if (!read) {
    read = client.readContract({ address, abi: decimalsAbi, functionName: "decimals" });
    decimalsCache.set(key, read);
    read.catch(() => decimalsCache.delete(key));
  }
  return read;
}

function cachedMaxPriceAge(client: PublicClient, rpcUrl: string, paymaster: Address, nowMs: number) {
  const key = `${rpcUrl}|${paymaster.toLowerCase()}`;
  const entry = maxPriceAgeCache.get(key);
  if (entry && nowMs - entry.at < MAX_PRICE_AGE_TTL_MS) return entry.read;
  const read = client.readContract({ address: paymaster, abi: tokenPaymasterAbi, functionName: "maxPriceAge" });
  maxPriceAgeCache.set(key, { at: nowMs, read });
  read.catch(() => maxPriceAgeCache.delete(key));
  return read;
}

/** "TUSD (0xabc…)": how every message names the token. */
export function tokenName(token: Pick<TokenConfig, "symbol" | "address">): string {
  return `${token.symbol} (${token.address})`;
}

/**
 * The token's price now (`nowMs`, the service clock). Throws PriceUnavailableError when it cannot be used, with a
 * message that names the token and says why, and PriceReadError when the chain's node cannot be asked.
 */
export async function readTokenPrice(chain: SponsoringChain, token: TokenConfig, nowMs: number): Promise<TokenPrice> {
  const { price } = token;
  if ("fixedRate" in price) {
    return { priceSource: PRICE_SOURCE.exchangeRate, exchangeRate: price.fixedRate, oracleAggregator: zeroAddress };
  }
  const aggregator = price.aggregator as Address;
  const feed = `the ${token.symbol} price feed ${aggregator}`;
  const client = chainClient(chain);
  if (!client || !chain.rpcUrl || !chain.tokenPaymaster) {
    throw new PriceUnavailableError(
      `${tokenName(token)} cannot be priced: chain ${chain.chainId} has no RPC to read ${feed} from`,
    );
  }
  const rpcUrl = chain.rpcUrl;
  let round: readonly [bigint, bigint, bigint, bigint, bigint];
  let feedDecimals: number;
  let tokenDecimals: number;
  let contractMaxAge: number;
  try {
    [round, feedDecimals, tokenDecimals, contractMaxAge] = await Promise.all([
      client.readContract({ address: aggregator, abi: aggregatorAbi, functionName: "latestRoundData" }),
      cachedDecimals(client, rpcUrl, aggregator),
      cachedDecimals(client, rpcUrl, token.address as Address),
      cachedMaxPriceAge(client, rpcUrl, chain.tokenPaymaster, nowMs),
    ]);
  } catch (error) {
    if (isContractFailure(error)) {
      throw new PriceUnavailableError(
        `${tokenName(token)} cannot be priced: ${feed}, the token or the token paymaster does not answer as expected ` +
          `(${describeTransportError(error, CHAIN_RPC_TIMEOUT_MS)})`,
      );
    }
    throw new PriceReadError(
      `${tokenName(token)} cannot be priced now: reading ${feed} failed (${describeTransportError(error, CHAIN_RPC_TIMEOUT_MS)})`,
    );
  }
  if (tokenDecimals !== token.decimals) {
    throw new PriceUnavailableError(
      `${tokenName(token)} cannot be priced: the token has ${tokenDecimals} decimals on chain, the configuration says ` +
        `${token.decimals}`,
    );
  }
  const [roundId, answer, , updatedAt, answeredInRound] = round;
  if (answer <= 0n) {
    throw new PriceUnavailableError(`${tokenName(token)} cannot be priced: ${feed} answers ${answer}, not a price`);
  }
  if (updatedAt === 0n || answeredInRound < roundId) {
    throw new PriceUnavailableError(
      `${tokenName(token)} cannot be priced: the latest round of ${feed} is not complete`,
    );
  }
  const maxAge = Math.min(price.maxAgeSeconds ?? Number.POSITIVE_INFINITY, contractMaxAge);
  const nowSeconds = Math.floor(nowMs / 1000);
  const validUntil = Number(updatedAt) + maxAge;
  if (validUntil <= nowSeconds) {
    throw new PriceUnavailableError(
      `${tokenName(token)} cannot be priced: ${feed} is stale (updated ${nowSeconds - Number(updatedAt)} s ago, ` +
        `at most ${maxAge} s allowed)`,
    );
  }
  const exchangeRate = oracleExchangeRate(answer, feedDecimals, tokenDecimals);
  if (exchangeRate === 0n) {
    throw new PriceUnavailableError(
      `${tokenName(token)} cannot be priced: the answer of ${feed} rounds to a zero exchange rate`,
    );
  }
  return { priceSource: PRICE_SOURCE.oracle, exchangeRate, oracleAggregator: aggregator, validUntil };
}

/** The contract answered, but not as expected (a revert, no code): asking again will not help. */
function isContractFailure(error: unknown): boolean {
  return (
    error instanceof BaseError &&
    error.walk(
      (cause) => cause instanceof ContractFunctionRevertedError || cause instanceof ContractFunctionZeroDataError,
    ) !== null
  );
}
