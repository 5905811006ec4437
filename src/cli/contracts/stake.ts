// `contracts stake`, `unlock-stake` and `withdraw-stake`: the owner's stake of each paymaster at its EntryPoint. Each
// reads the stake first and sends only what changes it, so a repeated run sends nothing.
import { type Address, encodeFunctionData, formatEther } from "viem";
import { verifyingPaymasterV07Abi } from "../../../contracts/artifacts/VerifyingPaymasterV07.abi";
import {
  REQUIRED_STAKE_WEI,
  REQUIRED_UNSTAKE_DELAY_SECONDS,
  readStake,
  type StakeInfo,
} from "../../chain/stakeRequirement";
import { CommandError } from "./options";
import type { Node, Reporter, SentTransaction } from "./session";
import { label, type Target } from "./targets";

/** addStake, unlockStake and withdrawStake read alike in all four of our paymasters. */
const stakeAbi = verifyingPaymasterV07Abi;

export interface StakeStep {
  target: Target;
  stake: StakeInfo;
}

async function stakes(node: Node, chosen: readonly Target[]): Promise<StakeStep[]> {
  return Promise.all(
    chosen.map(async (target) => ({
      target,
      stake: await readStake(node.publicClient, target.entryPoint, target.address),
    })),
  );
}

type Send = (what: string, to: Address, data: `0x${string}`, value?: bigint) => Promise<SentTransaction | undefined>;

export async function stake(
  node: Node,
  chosen: readonly Target[],
  amount: bigint,
  delay: number,
  report: Reporter,
  sendOne: Send,
): Promise<void> {
  if (amount < REQUIRED_STAKE_WEI || delay < REQUIRED_UNSTAKE_DELAY_SECONDS) {
    report.say(
      `note: bundlers commonly require a stake of at least ${formatEther(REQUIRED_STAKE_WEI)} and an unstake delay of at least ${REQUIRED_UNSTAKE_DELAY_SECONDS} s; \`status\` will report less as failing`,
    );
  }
  const steps = await stakes(node, chosen);
  for (const { target, stake: info } of steps) {
    if (delay < info.unstakeDelaySec) {
      throw new CommandError(
        `${label(target)} has an unstake delay of ${info.unstakeDelaySec} s; the EntryPoint refuses a shorter one: give --unstake-delay ${info.unstakeDelaySec} or more`,
      );
    }
  }
  for (const { target, stake: info } of steps) {
    const locked = info.staked && info.withdrawTime === 0;
    if (locked && info.stake >= amount && info.unstakeDelaySec >= delay) {
      report.say(`already staked: ${label(target)}: ${formatEther(info.stake)} for ${info.unstakeDelaySec} s`);
      continue;
    }
    const topUp = info.stake >= amount ? 0n : amount - info.stake;
    await sendOne(
      `staking ${label(target)}: ${formatEther(info.stake + topUp)} in all, unstake delay ${delay} s`,
      target.address,
      encodeFunctionData({ abi: stakeAbi, functionName: "addStake", args: [delay] }),
      topUp,
    );
  }
}

export async function unlockStake(node: Node, chosen: readonly Target[], report: Reporter, sendOne: Send) {
  for (const { target, stake: info } of await stakes(node, chosen)) {
    if (info.stake === 0n) {
      report.say(`nothing staked: ${label(target)}`);
      continue;
    }
    if (info.withdrawTime !== 0) {
      report.say(`already unlocking: ${label(target)}: withdrawable from ${isoTime(info.withdrawTime)}`);
      continue;
    }
    await sendOne(
      `unlocking the stake of ${label(target)} (withdrawable after ${info.unstakeDelaySec} s; bundlers stop accepting it now)`,
      target.address,
      encodeFunctionData({ abi: stakeAbi, functionName: "unlockStake" }),
    );
  }
}

export async function withdrawStake(
  node: Node,
  chosen: readonly Target[],
  to: Address,
  report: Reporter,
  sendOne: Send,
) {
  const steps = await stakes(node, chosen);
  const now = Number((await node.publicClient.getBlock()).timestamp);
  const problems: string[] = [];
  for (const { target, stake: info } of steps) {
    if (info.stake === 0n) continue;
    if (info.withdrawTime === 0)
      problems.push(
        `${label(target)}: the stake is locked: run \`unlock-stake\` first, then wait ${info.unstakeDelaySec} s`,
      );
    else if (now < info.withdrawTime)
      problems.push(`${label(target)}: withdrawable from ${isoTime(info.withdrawTime)}; run again then`);
  }
  if (problems.length > 0) throw new CommandError(`nothing was sent:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
  for (const { target, stake: info } of steps) {
    if (info.stake === 0n) {
      report.say(`nothing staked: ${label(target)}`);
      continue;
    }
    await sendOne(
      `withdrawing the stake of ${label(target)} (${formatEther(info.stake)}) to ${to}`,
      target.address,
      encodeFunctionData({ abi: stakeAbi, functionName: "withdrawStake", args: [to] }),
    );
  }
}

function isoTime(seconds: number): string {
  return new Date(seconds * 1000).toISOString();
}
