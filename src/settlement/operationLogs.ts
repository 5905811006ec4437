// What settlement reads from the chain: the UserOperationEvent of every EntryPoint the chain serves (v0.6, and v0.7
// on where served; the event is the same in all of them) for our paymasters on it, and from v0.7 on the
// PostOpRevertReason of operations our token paymasters paid for. From the approve-in-batch one it means the token pull
// in postOp failed: the EntryPoint reverted the execution and took the gas from the paymaster's own deposit, nothing
// charged. From the up-front one it means the refund failed: the execution is reverted too, and the whole prefund taken
// in validation stays with the paymaster, so the sender paid its signed maximum.
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
const userOperationRevertReason = getAbiItem({ abi: entryPointAbi, name: "UserOperationRevertReason" });
/**
 * What our token paymasters log in postOp (v0.6's and v0.7's alike; TokenChargeFailed is v0.6's alone), and the
 * up-front token paymaster's TokenCharged, another event by its fields (the charge and the refund of the prefund).
 */
const tokenChargeEvents = parseAbi([
  "event TokenCharged(address indexed sender, address indexed feeToken, bytes32 indexed userOpHash, uint256 amount, uint256 gasCost, uint256 exchangeRate, uint32 priceMarkup)",
  "event TokenChargeFailed(address indexed sender, address indexed feeToken, bytes32 indexed userOpHash, uint256 amount, uint256 gasCost)",
  "event TokenCharged(address indexed sender, address indexed feeToken, bytes32 indexed userOpHash, uint256 charge, uint256 refund, uint256 gasCost, uint256 exchangeRate, uint32 priceMarkup)",
]);

/** One EntryPoint of a chain and our paymasters on it. */
export interface WatchedEntryPoint {
  version: KnownEntryPointVersion;
  entryPoint: Address;
  /** Our verifying and token paymasters (both kinds) for this EntryPoint: the operations settlement settles. */
  paymasters: readonly Address[];
  /** v0.7 on: the approve-in-batch token paymaster, whose failed charges (PostOpRevertReason) are reported. */
  tokenPaymaster?: Address;
  /** v0.7 on: the up-front token paymaster, whose failed refunds (PostOpRevertReason) are reported. */
  permitTokenPaymaster?: Address;
}

/** Every EntryPoint of the chain with at least one of our paymasters, v0.6 first. */
export function watchedEntryPoints(chain: SponsoringChain): WatchedEntryPoint[] {
  const watched: WatchedEntryPoint[] = [];
  const v06 = [chain.verifyingPaymaster, chain.tokenPaymaster].filter((address) => address !== undefined);
  if (v06.length > 0) watched.push({ version: "0.6", entryPoint: chain.entryPoint, paymasters: v06 });
  for (const [version, served] of chain.entryPoints) {
    const paymasters = [served.verifyingPaymaster, served.tokenPaymaster, served.permitTokenPaymaster].filter(
      (address) => address !== undefined,
    );
    if (paymasters.length === 0) continue;
    watched.push({
      version,
      entryPoint: served.entryPoint,
      paymasters,
      ...(served.tokenPaymaster ? { tokenPaymaster: served.tokenPaymaster } : {}),
      ...(served.permitTokenPaymaster ? { permitTokenPaymaster: served.permitTokenPaymaster } : {}),
    });
  }
  return watched;
}

/** Our token paymasters on the chain, every EntryPoint version's, both kinds: whose charges the events report. */
export function tokenPaymastersOf(chain: SponsoringChain): Address[] {
  const served = [...chain.entryPoints.values()].flatMap((entry) => [entry.tokenPaymaster, entry.permitTokenPaymaster]);
  return [chain.tokenPaymaster, ...served].filter((address) => address !== undefined);
}

/**
 * An operation of our v0.7-on token paymasters whose postOp reverted: `charge`, the approve-in-batch paymaster's pull
 * failed (its gas came from our deposit, nothing charged); `refund`, the up-front paymaster's refund failed (the whole
 * prefund was kept: the sender paid its signed maximum).
 */
export interface TokenChargeFailure {
  failed: "charge" | "refund";
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

/** How settlement words an up-front token paymaster's reverted postOp, before the revert's own words. */
export const REFUND_FAILED = "the refund failed; the whole prefund was kept";

/**
 * The logs of blocks fromBlock..toBlock: one eth_getLogs for the UserOperationEvents of all watched EntryPoints and
 * paymasters, and beside it one for PostOpRevertReason when a v0.7-on token paymaster is watched, one for our token
 * paymasters' charges (`tokenPaymasters`, for the events' figures), and one for the revert reasons of the operations
 * whose execution failed, when some did.
 */
export async function readOperationLogs(
  client: PublicClient,
  watched: readonly WatchedEntryPoint[],
  fromBlock: bigint,
  toBlock: bigint,
  tokenPaymasters: readonly Address[] = [],
): Promise<OperationLogs> {
  const withTokenPaymaster = watched.filter(
    (entry) => entry.tokenPaymaster !== undefined || entry.permitTokenPaymaster !== undefined,
  );
  const [operationLogs, revertLogs, chargeLogs] = await Promise.all([
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
    tokenPaymasters.length === 0
      ? Promise.resolve([])
      : client.getLogs({ address: [...tokenPaymasters], events: tokenChargeEvents, fromBlock, toBlock, strict: true }),
  ]);
  // The filter matches any listed paymaster on any listed EntryPoint; only each EntryPoint's own paymasters count.
  const ours = operationLogs.filter((log) =>
    watched.some(
      (entry) =>
        isAddressEqual(log.address, entry.entryPoint) &&
        entry.paymasters.some((paymaster) => isAddressEqual(paymaster, log.args.paymaster)),
    ),
  );
  const revertReasons = await executionReverts(client, ours, fromBlock, toBlock);
  const events: OperationEvent[] = ours.map((log) => {
    const charge = chargeLogs.find(
      (candidate) =>
        candidate.transactionHash === log.transactionHash &&
        candidate.args.userOpHash === log.args.userOpHash &&
        isAddressEqual(candidate.address, log.args.paymaster),
    );
    const reason = revertReasons.get(`${log.transactionHash}:${log.args.userOpHash}`);
    return {
      userOpHash: log.args.userOpHash,
      sender: log.args.sender,
      nonce: log.args.nonce,
      success: log.args.success,
      actualGasCost: log.args.actualGasCost,
      actualGasUsed: log.args.actualGasUsed,
      txHash: log.transactionHash,
      blockNumber: log.blockNumber,
      ...(reason === undefined ? {} : { revertReason: reason }),
      ...(charge?.eventName === "TokenCharged"
        ? {
            tokenCharge: {
              feeToken: charge.args.feeToken.toLowerCase(),
              exchangeRate: charge.args.exchangeRate,
              ...("charge" in charge.args
                ? { amount: charge.args.charge, refund: charge.args.refund }
                : { amount: charge.args.amount }),
            },
          }
        : {}),
      ...(charge?.eventName === "TokenChargeFailed"
        ? { tokenChargeFailure: `the token charge failed: ${charge.args.amount} of token ${charge.args.feeToken} owed` }
        : {}),
    };
  });
  // PostOpRevertReason names no paymaster: the operation's UserOperationEvent (same transaction, same hash) does.
  const tokenChargeFailures: TokenChargeFailure[] = [];
  for (const log of revertLogs) {
    const entry = withTokenPaymaster.find((candidate) => isAddressEqual(candidate.entryPoint, log.address));
    const operation = ours.find(
      (candidate) =>
        candidate.args.userOpHash === log.args.userOpHash && isAddressEqual(candidate.address, log.address),
    );
    const failed = entry && operation ? failedPart(entry, operation.args.paymaster) : undefined;
    if (!entry || !failed) continue;
    const reason = describeRevert(log.args.revertReason);
    tokenChargeFailures.push({
      failed,
      version: entry.version,
      userOpHash: log.args.userOpHash,
      sender: log.args.sender,
      nonce: log.args.nonce,
      reason,
      txHash: log.transactionHash,
      blockNumber: log.blockNumber,
    });
    const event = events.find((e) => e.userOpHash === log.args.userOpHash && e.txHash === log.transactionHash);
    if (!event) continue;
    if (failed === "charge") event.tokenChargeFailure = `the token charge failed: ${reason}`;
    else event.refundFailure = `${REFUND_FAILED}: ${reason}`;
  }
  return { events, tokenChargeFailures };
}

/** What a reverted postOp of `paymaster` failed to do: our approve-in-batch one's charge, our up-front one's refund. */
function failedPart(entry: WatchedEntryPoint, paymaster: Address): TokenChargeFailure["failed"] | undefined {
  if (entry.tokenPaymaster && isAddressEqual(paymaster, entry.tokenPaymaster)) return "charge";
  if (entry.permitTokenPaymaster && isAddressEqual(paymaster, entry.permitTokenPaymaster)) return "refund";
  return undefined;
}

/**
 * Why each failed execution reverted, by transaction and user operation hash: the EntryPoint's
 * UserOperationRevertReason, asked for only when an operation of ours failed (rare, so no cost on the usual pass).
 */
async function executionReverts(
  client: PublicClient,
  ours: readonly { address: Address; transactionHash: Hex; args: { userOpHash: Hex; success: boolean } }[],
  fromBlock: bigint,
  toBlock: bigint,
): Promise<Map<string, string>> {
  const failed = ours.filter((log) => !log.args.success);
  const reasons = new Map<string, string>();
  if (failed.length === 0) return reasons;
  const logs = await client.getLogs({
    address: [...new Set(failed.map((log) => log.address))],
    event: userOperationRevertReason,
    args: { userOpHash: failed.map((log) => log.args.userOpHash) },
    fromBlock,
    toBlock,
    strict: true,
  });
  for (const log of logs) {
    reasons.set(`${log.transactionHash}:${log.args.userOpHash}`, describeRevert(log.args.revertReason));
  }
  return reasons;
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
