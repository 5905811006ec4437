// The local chain's token paymasters for EntryPoint v0.7 and later (TokenPaymasterV07 and PermitTokenPaymasterV07, whose
// deposit() and addStake() read alike) made usable: each one's EntryPoint deposit, which pays every token-paid
// operation's gas, topped up like the v0.6 token paymaster's, and a stake. The
// v0.6 token paymaster runs unstaked; this one returns a context from validation, which ERC-7562 allows a staked
// paymaster only, so a bundler in safe mode would refuse it unstaked. Every step skips what is already done.
import { type Address, encodeFunctionData, parseAbi, parseEther } from "viem";
import { tokenPaymasterV07Artifact } from "../bindings/paymasters/tokenArtifacts";
import type { BatchTransaction } from "./localBatch";
import type { ChainClients } from "./localDeployment";

/** The same as the v0.6 token paymaster's (LOCAL_TOKEN_PAYMASTER_DEPOSIT). */
export const LOCAL_TOKEN_PAYMASTER_V07_DEPOSIT = parseEther("10");
/** What bundlers ask of a staked entity by default (Alto, Rundler, Skandha): 1 ether, unlocked no sooner than a day. */
export const LOCAL_TOKEN_PAYMASTER_V07_STAKE = { amount: parseEther("1"), unstakeDelaySec: 86_400 } as const;

/** EntryPoint v0.7 and v0.8 keep the same deposit record (IStakeManager.DepositInfo). */
const stakeManagerAbi = parseAbi([
  "struct DepositInfo { uint256 deposit; bool staked; uint112 stake; uint32 unstakeDelaySec; uint48 withdrawTime; }",
  "function getDepositInfo(address account) view returns (DepositInfo info)",
]);

/** deposit() and addStake() call the EntryPoint once each and write a slot or two: well under this. */
const FUNDING_GAS = 150_000n;

export interface TokenPaymasterV07Account {
  paymaster: Address;
  entryPoint: Address;
}

/**
 * The transactions that top each token paymaster's deposit up to LOCAL_TOKEN_PAYMASTER_V07_DEPOSIT and stake it with
 * LOCAL_TOKEN_PAYMASTER_V07_STAKE, for the caller to send with others; none for a paymaster that has both. The wallet
 * client must be the owner (addStake is the owner's); anyone may deposit.
 */
export async function tokenPaymasterV07Funding(
  clients: ChainClients,
  paymasters: readonly TokenPaymasterV07Account[],
): Promise<BatchTransaction[]> {
  const infos = await Promise.all(
    paymasters.map(({ paymaster, entryPoint }) =>
      clients.publicClient.readContract({
        address: entryPoint,
        abi: stakeManagerAbi,
        functionName: "getDepositInfo",
        args: [paymaster],
      }),
    ),
  );
  const transactions: BatchTransaction[] = [];
  for (const [index, { paymaster }] of paymasters.entries()) {
    const info = infos[index];
    if (!info) continue;
    if (info.deposit < LOCAL_TOKEN_PAYMASTER_V07_DEPOSIT) {
      transactions.push({
        what: `funding the EntryPoint deposit of token paymaster ${paymaster}`,
        to: paymaster,
        data: encodeFunctionData({ abi: tokenPaymasterV07Artifact.abi, functionName: "deposit" }),
        value: LOCAL_TOKEN_PAYMASTER_V07_DEPOSIT - info.deposit,
        gas: FUNDING_GAS,
      });
    }
    if (!info.staked) {
      transactions.push({
        what: `staking token paymaster ${paymaster}`,
        to: paymaster,
        data: encodeFunctionData({
          abi: tokenPaymasterV07Artifact.abi,
          functionName: "addStake",
          args: [LOCAL_TOKEN_PAYMASTER_V07_STAKE.unstakeDelaySec],
        }),
        value: LOCAL_TOKEN_PAYMASTER_V07_STAKE.amount,
        gas: FUNDING_GAS,
      });
    }
  }
  return transactions;
}
