// The stake we require of each of our paymasters, and how a paymaster's stake is read from its EntryPoint.
//
// Why staked at all: ERC-7562 lets a bundler accept an operation whose paymaster returns a postOp context only when
// that paymaster is staked, and every paymaster of ours returns one (the verifying ones carry the dApp's reservation
// to postOp, the token ones the charge). The token paymasters also read the fee token's and the price feed's storage
// during validation, which ERC-7562 allows a staked paymaster only.
//
// Why these figures: ERC-7562 fixes the unstake delay bundlers ask for at one day (MIN_UNSTAKE_DELAY 86400 s) and
// leaves the amount to each chain; Rundler, Alchemy's bundler, asks 1 native token (1e18 wei) by default, and the
// others ask less (Alto's default is 1 wei for 1 s). Requiring what the strictest common bundler asks means no bundler
// refuses our paymasters over their stake. The stake is not spent: it comes back after unlock-stake and the delay.
import type { Address, PublicClient } from "viem";
import { parseAbi } from "viem";

/** 1 native token (1e18 wei): Rundler's default MIN_STAKE_VALUE, the highest of the common bundlers. */
export const REQUIRED_STAKE_WEI = 10n ** 18n;
/** One day: ERC-7562's MIN_UNSTAKE_DELAY. */
export const REQUIRED_UNSTAKE_DELAY_SECONDS = 86_400;

/**
 * The same five words in v0.6 (uint112 deposit) and v0.7/v0.8 (uint256 deposit): a static struct encodes every field
 * in a word of its own, so one ABI reads every version.
 */
export const entryPointStakeAbi = parseAbi([
  "function getDepositInfo(address account) view returns ((uint256 deposit, bool staked, uint112 stake, uint32 unstakeDelaySec, uint48 withdrawTime))",
  "function balanceOf(address account) view returns (uint256)",
]);

export interface StakeInfo {
  deposit: bigint;
  staked: boolean;
  stake: bigint;
  unstakeDelaySec: number;
  /** 0 while locked; after unlock-stake, when withdraw-stake becomes possible (seconds since the epoch). */
  withdrawTime: number;
}

export async function readStake(client: PublicClient, entryPoint: Address, account: Address): Promise<StakeInfo> {
  const info = await client.readContract({
    address: entryPoint,
    abi: entryPointStakeAbi,
    functionName: "getDepositInfo",
    args: [account],
  });
  return { ...info };
}

/** What is short of the requirement, in words; empty when the stake meets it. */
export function stakeShortfalls(info: StakeInfo): string[] {
  const short: string[] = [];
  if (info.withdrawTime !== 0) short.push("the stake is unlocking (unlock-stake was called)");
  else if (!info.staked) short.push("not staked");
  if (info.stake < REQUIRED_STAKE_WEI) short.push(`stake below ${REQUIRED_STAKE_WEI} wei (1 native token)`);
  if (info.unstakeDelaySec < REQUIRED_UNSTAKE_DELAY_SECONDS) {
    short.push(`unstake delay below ${REQUIRED_UNSTAKE_DELAY_SECONDS} s`);
  }
  return short;
}
