import type { FastifyBaseLogger } from "fastify";
import type { SponsoringChain } from "../chain/sponsoringChains";
import type { SponsorshipSetup } from "../sponsorship/setup";
import type { SponsorDeps } from "../sponsorship/sponsor";

/** What an RPC method gets: the paymaster and chain the path named, and the service's sponsorship parts. */
export interface MethodContext {
  setup: SponsorshipSetup;
  chain: SponsoringChain;
  deps: SponsorDeps;
  log: FastifyBaseLogger;
}

export type RpcMethod = (params: unknown[], ctx: MethodContext) => Promise<unknown>;
