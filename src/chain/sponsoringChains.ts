import type { Address } from "viem";
import type { ChainConfig, TokenConfig } from "../config";
import { ENTRY_POINT_V06_ADDRESS } from "./entryPoint";
import { LOCAL_TOKEN_PAYMASTER_ADDRESS, LOCAL_VERIFYING_PAYMASTER_ADDRESS } from "./localAddresses";

/** A supported chain with the contract addresses a sponsorship signs for. */
export interface SponsoringChain {
  chainId: number;
  name: string;
  entryPoint: Address;
  /** Undefined where no verifying paymaster is deployed: requests are then refused with a reason. */
  verifyingPaymaster?: Address;
  /** A node's JSON-RPC; without it the chain signs but cannot estimate gas, check deposits or settle. */
  rpcUrl?: string;
  bundlerUrl?: string;
  /** ERC20 mode: the token paymaster, set when the chain has fee tokens; none means ERC20 mode is refused. */
  tokenPaymaster?: Address;
  tokens?: readonly TokenConfig[];
}

export const LOCAL_CHAIN_ID = 31337;

/**
 * Fills each configured chain's defaults: the canonical EntryPoint v0.6, and on the local development chain the
 * deterministic addresses where the project deploys its paymasters, so that signing works on a fresh start.
 */
export function sponsoringChains(chains: ReadonlyMap<number, ChainConfig>): ReadonlyMap<number, SponsoringChain> {
  const resolved = new Map<number, SponsoringChain>();
  for (const chain of chains.values()) {
    const verifyingPaymaster =
      (chain.verifyingPaymaster as Address | undefined) ??
      (chain.chainId === LOCAL_CHAIN_ID ? LOCAL_VERIFYING_PAYMASTER_ADDRESS : undefined);
    const tokens = chain.tokens ?? [];
    const tokenPaymaster =
      tokens.length === 0
        ? undefined
        : ((chain.tokenPaymaster as Address | undefined) ??
          (chain.chainId === LOCAL_CHAIN_ID ? LOCAL_TOKEN_PAYMASTER_ADDRESS : undefined));
    resolved.set(chain.chainId, {
      chainId: chain.chainId,
      name: chain.name,
      entryPoint: (chain.entryPoint as Address | undefined) ?? ENTRY_POINT_V06_ADDRESS,
      ...(verifyingPaymaster ? { verifyingPaymaster } : {}),
      ...(chain.rpcUrl ? { rpcUrl: chain.rpcUrl } : {}),
      ...(chain.bundlerUrl ? { bundlerUrl: chain.bundlerUrl } : {}),
      ...(tokenPaymaster ? { tokenPaymaster, tokens } : {}),
    });
  }
  return resolved;
}
