import { createPublicClient, http, type PublicClient } from "viem";
import type { SponsoringChain } from "./sponsoringChains";

/** Every call to a node is bounded: an unreachable RPC answers with an error in this time, never a hang. */
export const CHAIN_RPC_TIMEOUT_MS = 5_000;

const clients = new Map<string, PublicClient>();

/** A viem client for the chain's node, one per RPC URL; undefined where the chain has no RPC configured. */
export function chainClient(chain: Pick<SponsoringChain, "rpcUrl">): PublicClient | undefined {
  if (!chain.rpcUrl) return undefined;
  let client = clients.get(chain.rpcUrl);
  if (!client) {
    client = createPublicClient({
      transport: http(chain.rpcUrl, { timeout: CHAIN_RPC_TIMEOUT_MS, retryCount: 0 }),
    }) as PublicClient;
    clients.set(chain.rpcUrl, client);
  }
  return client;
}
