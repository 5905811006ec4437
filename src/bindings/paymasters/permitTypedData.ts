// The EIP-2612 Permit a sender's owner signs for PermitTokenPaymasterV07: EIP-712 typed data in the form viem's
// signTypedData takes. The domain is the token's as the chain gives it (EIP-5267's eip712Domain(), or name() and
// version()), never assumed: USDC's differs by network ("USD Coin" version "2" on Base, "USDC" on Base Sepolia).
import type { Address, TypedDataDomain } from "viem";
import { PERMIT_DEADLINE } from "./permitTokenPaymasterAndData";

const PERMIT_TYPES = {
  Permit: [
    { name: "owner", type: "address" },
    { name: "spender", type: "address" },
    { name: "value", type: "uint256" },
    { name: "nonce", type: "uint256" },
    { name: "deadline", type: "uint256" },
  ],
} as const;

/** What varies between permits: the deadline is always the maximum, the one the paymaster runs a permit with. */
export interface PermitMessage {
  /** The sender: its balance pays. */
  owner: Address;
  /** The paymaster. */
  spender: Address;
  value: bigint;
  /** The token's nonces(owner) now: one permit per owner at a time. */
  nonce: bigint;
}

export function permitTypedData(domain: TypedDataDomain, message: PermitMessage) {
  return {
    domain,
    types: PERMIT_TYPES,
    primaryType: "Permit",
    message: { ...message, deadline: PERMIT_DEADLINE },
  } as const;
}
