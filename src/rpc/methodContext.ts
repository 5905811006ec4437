import type { FastifyBaseLogger } from "fastify";
import type { SponsoringChain } from "../chain/sponsoringChains";
import type { DecisionMode, Metrics } from "../metrics/metrics";
import type { SponsorshipSetup } from "../sponsorship/setup";
import type { SponsorDeps } from "../sponsorship/sponsor";

/** What a method tells the RPC route about the sponsorship decision it made, for the decision metrics and log line. */
export interface DecisionNote {
  /** Set once the method knows it is deciding a sponsorship, in this mode. */
  mode?: DecisionMode;
  /** The rule that refused, when one did. */
  refusedBy?: string;
}

/** What an RPC method gets: the paymaster and chain the path named, and the service's sponsorship parts. */
export interface MethodContext {
  setup: SponsorshipSetup;
  chain: SponsoringChain;
  deps: SponsorDeps;
  log: FastifyBaseLogger;
  decision: DecisionNote;
  /** The service's metrics; absent in tests that build a context by hand. */
  metrics?: Metrics;
}

export type RpcMethod = (params: unknown[], ctx: MethodContext) => Promise<unknown>;
