import { LOCAL_CHAIN_ID } from "../chain/sponsoringChains";
import type { ChainConfig } from "../config";

/**
 * Whether the service runs its own development chain: LOCAL_CHAIN=auto and 31337 listed without an rpcUrl. Kept apart
 * from localChain.ts, which main.ts loads only when this says yes: anvil and the contracts it deploys are development
 * packages, absent from a production install.
 */
export function wantsLocalChain(config: {
  localChain: "auto" | "off";
  chains: ReadonlyMap<number, ChainConfig>;
}): boolean {
  const local = config.chains.get(LOCAL_CHAIN_ID);
  return config.localChain === "auto" && local !== undefined && !local.rpcUrl;
}
