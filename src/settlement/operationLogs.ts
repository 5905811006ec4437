// What settlement reads from the chain: the UserOperationEvent of every EntryPoint the chain serves (v0.6, and v0.7
// and v0.8 where served; the event is the same in all three) for our paymasters on it, and on v0.7 and v0.8 the
// PostOpRevertReason of operations our token paymaster paid for: the token pull in postOp failed, so the EntryPoint
// reverted the execution and took the gas from the token paymaster's own deposit.
import {
  type Address,
  decodeErrorResult,
  getAbiItem,
  type Hex,
  isAddressEqual,
  type PublicClient,
  parseAbi,
} from "viem";
import { entryPointAbi } from "../bindings/entryPoints/entryPoint";
import { entryPointV07Abi } from "../bindings/entryPoints/entryPointV07";
import type { KnownEntryPointVersion } from "../bindings/entryPoints/versions";
import type { SponsoringChain } from "../chain/sponsoringChains";
import type { OperationEvent } from "../storage/settlement";

const userOperationEvent = getAbiItem({ abi: entryPointAbi, name: "UserOperationEvent" });
const postOpRevertReason = getAbiItem({ abi: entryPointV07Abi, name: "PostOpRevertReason" });

/** One EntryPoint of a chain and our paymasters on it. */
export interface WatchedEntryPoint {
  version: KnownEntryPointVersion;
  entryPoint: Address;
  /** Our verifying and token paymasters for this EntryPoint: the operations settlement settles. */
  paymasters: readonly Address[];
  /** v0.7 and v0.8: the token paymaster whose failed charges (PostOpRevertReason) are reported. */
  tokenPaymaster?: Address;
}

/** Every EntryPoint of the chain with at least one of our paymasters, v0.6 first. */
export function watchedEntryPoints(chain: SponsoringChain): WatchedEntryPoint[] {
  const watched: WatchedEntryPoint[] = [];
  const v06 = [chain.verifyingPaymaster, chain.tokenPaymaster].filter((address) => address !== undefined);
  if (v06.length > 0) watched.push({ version: "0.6", entryPoint: chain.entryPoint, paymasters: v06 });
  for (const [version, served] of chain.entryPoints) {
    const paymasters = [served.verifyingPaymaster, served.tokenPaymaster].filter((address) => address !== undefined);
    if (paymasters.length === 0) continue;
    watched.push({
      version,
      entryPoint: served.entryPoint,
      paymasters,
      ...(served.tokenPaymaster ? { tokenPaymaster: served.tokenPaymaster } : {}),
    });
  }
  return watched;
}

/** An operation our v0.7/v0.8 token paymaster paid for whose token charge failed (its gas came from our deposit). */
export interface TokenChargeFailure {
  version: KnownEntryPointVersion;
  userOpHash: Hex;
  sender: Address;
  nonce: bigint;
  /** The postOp revert, decoded where it is a known error (the token's, SafeERC20's, a reason string). */
  reason: string;
  txHash: Hex;
  blockNumber: bigint;
}

export interface OperationLogs {
  events: OperationEvent[];
  tokenChargeFailures: TokenChargeFailure[];
}

/**
 * The logs of blocks fromBlock..toBlock: one eth_getLogs for the UserOperationEvents of all watched EntryPoints and
 * paymasters, and beside it one for PostOpRevertReason when a v0.7/v0.8 token paymaster is watched.
 */
export async function readOperationLogs(
  client: PublicClient,
  watched: readonly WatchedEntryPoint[],
  fromBlock: bigint,
  toBlock: bigint,
): Promise<OperationLogs> {
  const withTokenPaymaster = watched.filter((entry) => entry.tokenPaymaster !== undefined);
  const [operationLogs, revertLogs] = await Promise.all([
    client.getLogs({
      address: watched.map((entry) => entry.entryPoint),
      event: userOperationEvent,
      args: { paymaster: watched.flatMap((entry) => entry.paymasters) },
      fromBlock,
      toBlock,
      strict: true,
    }),
    withTokenPaymaster.length === 0
      ? Promise.resolve([])
      : client.getLogs({
          address: withTokenPaymaster.map((entry) => entry.entryPoint),
          event: postOpRevertReason,
          fromBlock,
          toBlock,
          strict: true,
        }),
  ]);
  // The filter matches any listed paymaster on any listed EntryPoint; only each EntryPoint's own paymasters count.
  const ours = operationLogs.filter((log) =>
    watched.some(
      (entry) =>
        isAddressEqual(log.address, entry.entryPoint) &&
        entry.paymasters.some((paymaster) => isAddressEqual(paymaster, log.args.paymaster)),
    ),
  );
  const events = ours.map((log) => ({
    userOpHash: log.args.userOpHash,
    sender: log.args.sender,
    nonce: log.args.nonce,
    success: log.args.success,
    actualGasCost: log.args.actualGasCost,
    actualGasUsed: log.args.actualGasUsed,
    txHash: log.transactionHash,
    blockNumber: log.blockNumber,
  }));
  // PostOpRevertReason names no paymaster: the operation's UserOperationEvent (same transaction, same hash) does.
  const tokenChargeFailures: TokenChargeFailure[] = [];
  for (const log of revertLogs) {
    const entry = withTokenPaymaster.find((candidate) => isAddressEqual(candidate.entryPoint, log.address));
    const operation = ours.find(
      (candidate) =>
        candidate.args.userOpHash === log.args.userOpHash && isAddressEqual(candidate.address, log.address),
    );
    if (!entry?.tokenPaymaster || !operation || !isAddressEqual(operation.args.paymaster, entry.tokenPaymaster)) {
      continue;
    }
    tokenChargeFailures.push({
      version: entry.version,
      userOpHash: log.args.userOpHash,
      sender: log.args.sender,
      nonce: log.args.nonce,
      reason: describeRevert(log.args.revertReason),
      txHash: log.transactionHash,
      blockNumber: log.blockNumber,
    });
  }
  return { events, tokenChargeFailures };
}

/** The errors a failed token pull reverts with: the EntryPoint's wrapper, OpenZeppelin's ERC20 and SafeERC20, a string. */
const revertAbi = parseAbi([
  "error Error(string reason)",
  "error PostOpReverted(bytes returnData)",
  "error ERC20InsufficientAllowance(address spender, uint256 allowance, uint256 needed)",
  "error ERC20InsufficientBalance(address sender, uint256 balance, uint256 needed)",
  "error SafeERC20FailedOperation(address token)",
]);

/** Readable words for a revert: a reason string, a known error with its arguments, or else its first bytes. */
export function describeRevert(data: Hex, depth = 0): string {
  if (data === "0x") return "no revert data";
  try {
    const decoded = decodeErrorResult({ abi: revertAbi, data });
    if (decoded.errorName === "PostOpReverted" && depth < 2) {
      return describeRevert(decoded.args[0] as Hex, depth + 1);
    }
    if (decoded.errorName === "Error") return decoded.args[0];
    return `${decoded.errorName}(${decoded.args.map(String).join(", ")})`;
  } catch {
    return `revert data ${data.slice(0, 2 + 2 * 36)}${data.length > 2 + 2 * 36 ? "…" : ""}`;
  }
}
