// Validity windows in block numbers (EntryPoint v0.9). When both validAfter and validUntil have bit 47 set, the
// EntryPoint reads the rest of their bits as block numbers: the operation is valid in blocks validAfter+1 to validUntil.
// A paymaster asks for it (its `validityBlocks` setting); the window then starts a few blocks before the chain's head
// and ends `validityBlocks` after it. Nothing else ever sets the bit: a window in seconds that has it is refused before
// signing (`requireWindowUnit`), and so is a window in blocks that lacks it on either side, which the EntryPoint would
// read as seconds (validUntil's bit alone would make it valid for millions of years).

import type { SigningWindow } from "../bindings/paymasters/paymasterKind";
import { chainHeadOf } from "../chain/chainHead";
import type { SponsoringChain } from "../chain/sponsoringChains";
import type { SponsorshipSetup } from "./setup";

/** Bit 47: both ends of a window have it set when they are block numbers. Unix seconds stay far below it. */
export const BLOCK_NUMBER_FLAG = 2 ** 47;

/**
 * How far before the head we read the window starts: the bundler's node may be a few blocks behind ours when it
 * simulates, and a window that starts after its head would be refused there as not yet valid.
 */
export const BLOCK_SKEW = 10;

/** The window in block numbers, flagged, for a signature made when the chain's head is `head`. */
export function blockWindow(head: bigint, blocks: number): SigningWindow {
  const start = head > BigInt(BLOCK_SKEW) ? Number(head) - BLOCK_SKEW : 0;
  const end = Number(head) + blocks;
  if (!Number.isSafeInteger(end) || end >= BLOCK_NUMBER_FLAG) {
    throw new RangeError(`block ${head} + ${blocks} does not fit below bit 47`);
  }
  return { validAfter: BLOCK_NUMBER_FLAG + start, validUntil: BLOCK_NUMBER_FLAG + end };
}

/** Whether one end of a window has bit 47 set (for a value that fits in 48 bits, as validUntil and validAfter do). */
const flagged = (value: number): boolean => Math.floor(value / BLOCK_NUMBER_FLAG) % 2 === 1;

/**
 * Refuses a window whose ends are not both what was asked for: in seconds, neither has bit 47; in blocks, both have
 * it. The engine checks every window it signs, so a clock or arithmetic gone wrong can never make an EntryPoint read
 * seconds as blocks or blocks as seconds.
 */
export function requireWindowUnit(window: SigningWindow, unit: "seconds" | "blocks"): void {
  const ends = Object.entries(window);
  for (const [name, value] of ends) {
    if (!Number.isSafeInteger(value) || value < 0 || value >= 2 ** 48) {
      throw new RangeError(`${name} ${value} is not a uint48`);
    }
  }
  for (const [name, value] of ends) {
    if (unit === "seconds" && flagged(value)) {
      throw new RangeError(`${name} ${value} sets bit 47, which EntryPoint v0.9 reads as a block number, not seconds`);
    }
    if (unit === "blocks" && !flagged(value)) {
      throw new RangeError(`${name} ${value} lacks bit 47: a window in blocks needs it on both ends`);
    }
  }
}

/**
 * How long the ledger holds a signature valid for `blocks` blocks, in seconds: twice the time that many blocks took
 * lately, and never less than a window in seconds would have been held (the request's expiry). A chain that slows to
 * less than half its recent pace could still mine the operation after that; settlement charges it then all the same.
 */
export function heldSecondsFor(blocks: number, secondsPerBlock: number, expirySeconds: number): number {
  return Math.max(expirySeconds, Math.ceil(blocks * secondsPerBlock * 2));
}

/** A window in blocks to sign and how long the ledger holds it, or why none can be had (recorded as a refusal). */
export type BlockWindowPlan =
  | { window: SigningWindow; heldSeconds: number }
  | { refusal: { reason: string; refusedBy: "blockWindow" } };

/**
 * The window in blocks for one signature, when the paymaster asks for one (`validityBlocks`), the EntryPoint reads
 * them and the kind signs them; undefined otherwise (a window in seconds). The head is read before any rule, so that
 * a chain whose head cannot be read refuses with nothing reserved. `nowMs`: the service's clock (the pace's age).
 */
export async function planBlockWindow(
  setup: Pick<SponsorshipSetup, "validityBlocks">,
  chain: Pick<SponsoringChain, "chainId" | "name" | "rpcUrl" | "heads">,
  signs: { version: { readsBlockWindows: boolean }; kind: { signsBlockWindows: boolean }; expirySeconds: number },
  nowMs: number,
): Promise<BlockWindowPlan | undefined> {
  const blocks = setup.validityBlocks;
  if (blocks === undefined || !signs.version.readsBlockWindows || !signs.kind.signsBlockWindows) return undefined;
  const asked = `The paymaster's signatures are valid for ${blocks} blocks`;
  const heads = chainHeadOf(chain);
  if (!heads) return refusal(`${asked}, but chain ${chain.chainId} (${chain.name}) has no RPC to read its head from`);
  const head = await heads.read(nowMs);
  if (!head.ok) return refusal(`${asked}, but chain ${chain.chainId}'s head block could not be read: ${head.error}`);
  return {
    window: blockWindow(head.number, blocks),
    heldSeconds: heldSecondsFor(blocks, head.secondsPerBlock, signs.expirySeconds),
  };
}

const refusal = (reason: string): BlockWindowPlan => ({ refusal: { reason, refusedBy: "blockWindow" } });
