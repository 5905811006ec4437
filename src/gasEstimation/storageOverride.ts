// Storage slots set for one simulation only (eth_call's state override, and the same in a bundler's
// eth_estimateUserOperationGas): what the service's estimate assumes that the chain does not hold yet.
import type { Address, Hex, StateOverride } from "viem";

/** One storage slot of one contract. */
export interface StorageOverride {
  address: Address;
  slot: Hex;
  value: Hex;
}

/** For viem's eth_call: one entry per contract, its slots together. */
export function toViemStateOverride(overrides: readonly StorageOverride[]): StateOverride {
  const byContract = new Map<string, { address: Address; stateDiff: { slot: Hex; value: Hex }[] }>();
  for (const { address, slot, value } of overrides) {
    const key = address.toLowerCase();
    let entry = byContract.get(key);
    if (!entry) {
      entry = { address, stateDiff: [] };
      byContract.set(key, entry);
    }
    entry.stateDiff.push({ slot, value });
  }
  return [...byContract.values()];
}

/** As JSON-RPC carries it (geth's format, which bundlers take as eth_estimateUserOperationGas' third parameter). */
export function toRpcStateOverride(
  overrides: readonly StorageOverride[],
): Record<Address, { stateDiff: Record<Hex, Hex> }> {
  const rpc: Record<Address, { stateDiff: Record<Hex, Hex> }> = {};
  for (const { address, slot, value } of overrides) {
    const key = address.toLowerCase() as Address;
    rpc[key] ??= { stateDiff: {} };
    rpc[key].stateDiff[slot] = value;
  }
  return rpc;
}
