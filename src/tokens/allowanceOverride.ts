// A fee quote is asked for an operation that does not yet approve the token paymaster: wallets add the approve once the
// user has picked a token and seen its price. Simulated as it is, that operation cannot pay: the token paymaster's
// postOp pulls the charge with transferFrom and finds no allowance (and where the contract's allowanceRequired is on,
// validation refuses it first). Such a quote is therefore estimated as if the allowance were given: the simulation
// (the node's or the bundler's) runs with the token's storage overridden so that allowance(sender, tokenPaymaster) is
// large. Nothing else changes, so an operation that fails for another reason (too few tokens, a reverting call, a bad
// signature) is still refused. An operation that approves the token paymaster itself is estimated as it is: its own
// approve gives the allowance, and costs what it will cost.
//
// Where the allowance lives in the token's storage is found once per token by asking the node: one eth_call of
// allowance(owner, spender) with a distinct value in every candidate slot tells which one the token reads.
import { type Address, encodeAbiParameters, erc20Abi, type Hex, toHex } from "viem";
import { keccak256 } from "../abi/keccak";
import { chainClient } from "../chain/chainClient";
import type { SponsoringChain } from "../chain/sponsoringChains";
import type { StorageOverride } from "../gasEstimation/storageOverride";

/**
 * How a token lays out its allowances: the mapping's base slot, and the order of the two keys.
 * `solidity`: allowances[owner][spender] at keccak(spender . keccak(owner . base)) (OpenZeppelin, most tokens).
 * `vyper`: at keccak(keccak(base . owner) . spender) (Vyper's HashMap, e.g. Curve's tokens).
 */
export interface AllowanceLayout {
  base: bigint;
  keyOrder: "solidity" | "vyper";
}

/** Plain storage slots tried as the mapping's base: tokens declare their allowances among their first variables. */
const PLAIN_BASES = 64n;

/** OpenZeppelin 5's upgradeable ERC20 keeps its state at this ERC-7201 namespace; _allowances is its second field. */
const OPENZEPPELIN_5_ERC20_STORAGE = 0x52c63247e1f47db19d5ce0460030c497f067ca4cebf71ba98eeadabe20bace00n;

/**
 * The allowance the simulation sees: large, yet below 2^256 − 1, which OpenZeppelin and others treat as unlimited and
 * never write back; a finite allowance is written on every charge, as the approve the wallet adds will be.
 */
export const SIMULATED_ALLOWANCE = 1n << 255n;

/**
 * Gas the approve the wallet adds after the quote costs the operation, added to a quote estimated with the override so
 * that the quote covers the operation that will be signed: the allowance's first write (22,100 gas, from zero), the
 * call into the token and the batch's larger calldata. Measured at about 26,000 on anvil (OpenZeppelin's ERC20, a
 * SimpleAccount batch; test/e2e/erc20.test.ts checks that the signed maximum stays within the quote).
 */
export const QUOTED_APPROVE_GAS = 40_000n;

/** approve(address,uint256)'s selector. */
const APPROVE_SELECTOR = "095ea7b3";

/**
 * Whether the callData carries approve(spender, …) anywhere: accounts embed the calls they make ABI-encoded (a
 * selector, then the spender as a 32-byte word), whatever their own encoding around them.
 */
export function approvesSpender(callData: Hex, spender: Address): boolean {
  return callData.toLowerCase().includes(`${APPROVE_SELECTOR}${"0".repeat(24)}${spender.slice(2).toLowerCase()}`);
}

/** Probe keys: any two addresses do; these hold nothing on any chain. */
const PROBE_OWNER: Address = "0x000000000000000000000000000000000000a110";
const PROBE_SPENDER: Address = "0x000000000000000000000000000000000000a111";

/** Probe values: this marker in the high bits, the candidate's index in the low ones. */
const PROBE_MARKER = 0xa110_0000_0000_0000_0000_0000_0000_0000n << 128n;

/** The slot of allowance(owner, spender) under `layout`. */
function allowanceSlot(layout: AllowanceLayout, owner: Address, spender: Address): Hex {
  if (layout.keyOrder === "solidity") {
    // mapping(address => mapping(address => uint256)): keccak(key . slot) at each level.
    const inner = keccak256(encodeAbiParameters([{ type: "address" }, { type: "uint256" }], [owner, layout.base]));
    return keccak256(encodeAbiParameters([{ type: "address" }, { type: "bytes32" }], [spender, inner]));
  }
  // Vyper's HashMap hashes the slot first: keccak(slot . key) at each level.
  const inner = keccak256(encodeAbiParameters([{ type: "uint256" }, { type: "address" }], [layout.base, owner]));
  return keccak256(encodeAbiParameters([{ type: "bytes32" }, { type: "address" }], [inner, spender]));
}

function candidates(): AllowanceLayout[] {
  const layouts: AllowanceLayout[] = [];
  for (let base = 0n; base < PLAIN_BASES; base++) {
    layouts.push({ base, keyOrder: "solidity" }, { base, keyOrder: "vyper" });
  }
  layouts.push({ base: OPENZEPPELIN_5_ERC20_STORAGE + 1n, keyOrder: "solidity" });
  return layouts;
}

/** Found layouts (or null: none of the candidates), per chain and token; only definite answers are kept. */
const layouts = new Map<string, AllowanceLayout | null>();

/**
 * The token's allowance layout, asked of the chain's node once. Undefined when the chain has no node, the node
 * cannot answer now (not remembered: asked again next time), or no candidate is the one the token reads.
 */
export async function allowanceLayout(chain: SponsoringChain, token: Address): Promise<AllowanceLayout | undefined> {
  const key = `${chain.chainId}:${token.toLowerCase()}`;
  const known = layouts.get(key);
  if (known !== undefined) return known ?? undefined;
  const client = chainClient(chain);
  if (!client) return undefined;
  const tried = candidates();
  let seen: bigint;
  try {
    seen = await client.readContract({
      address: token,
      abi: erc20Abi,
      functionName: "allowance",
      args: [PROBE_OWNER, PROBE_SPENDER],
      stateOverride: [
        {
          address: token,
          stateDiff: tried.map((layout, index) => ({
            slot: allowanceSlot(layout, PROBE_OWNER, PROBE_SPENDER),
            value: toHex(PROBE_MARKER + BigInt(index), { size: 32 }),
          })),
        },
      ],
    });
  } catch {
    return undefined;
  }
  const index = seen - PROBE_MARKER;
  const found = index >= 0n && index < BigInt(tried.length) ? (tried[Number(index)] ?? null) : null;
  layouts.set(key, found);
  return found ?? undefined;
}

/**
 * The override that gives `spender` SIMULATED_ALLOWANCE of `owner`'s tokens, or undefined when the token's layout is
 * not known (the simulation then runs on the real allowance).
 */
export async function allowanceOverride(
  chain: SponsoringChain,
  token: Address,
  owner: Address,
  spender: Address,
): Promise<StorageOverride | undefined> {
  const layout = await allowanceLayout(chain, token);
  if (!layout) return undefined;
  return {
    address: token,
    slot: allowanceSlot(layout, owner, spender),
    value: toHex(SIMULATED_ALLOWANCE, { size: 32 }),
  };
}
