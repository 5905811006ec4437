import type { FastifyBaseLogger } from "fastify";
import type { SponsoringChain } from "../chain/sponsoringChains";
import type { DecisionMode, Metrics } from "../metrics/metrics";
import type { SponsorDeps } from "../sponsorship/engine";
import type { SponsorshipSetup } from "../sponsorship/setup";
import type { QuotaCounter } from "../storage/quotaCounter";

/** What a use case tells its caller about the sponsorship decision it made, for the decision metrics and log line. */
export interface DecisionNote {
  /** Set once the use case knows it is deciding a sponsorship, in this mode. */
  mode?: DecisionMode;
  /** The rule that refused, when one did. */
  refusedBy?: string;
}

/** What a sponsorship use case works with: the paymaster and chain of the request, and the service's parts. */
export interface ActionContext {
  setup: SponsorshipSetup;
  chain: SponsoringChain;
  deps: SponsorDeps;
  log: FastifyBaseLogger;
  decision: DecisionNote;
  /** The service's metrics; absent in tests that build a context by hand. */
  metrics?: Metrics;
  /** Who sent the request, as the RATE_LIMIT quotas tell clients apart (the sender comes from the parsed operation). */
  client: { ip: string; origin: string | undefined };
  /** Where the quotas are counted: in the process on PGlite, in the database on PostgreSQL. */
  quotas: QuotaCounter;
}
