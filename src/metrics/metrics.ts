import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { BatchObserver } from "../storage/batch";

// The service's Prometheus metrics. Every label takes its values from a small fixed set (or from the configured chain
// ids): never an apiKey, a token, a sender, a URL or a free-text reason, so that no series can multiply without bound
// and nothing secret can reach a scrape. test/metrics checks it.

/** Outcomes of one sponsorship decision. */
export type DecisionOutcome = "sponsored" | "refused" | "error";
/** unknown: refused before the request's mode was read (a paused paymaster refuses every request first). */
export type DecisionMode = "sponsored" | "erc20" | "unknown";
/** Outcomes of one webhook call. */
export type WebhookOutcome = "verified" | "refused" | "timeout";
/** The group commits of src/storage/batch.ts, by what they write. */
export type BatchName = "sponsorships" | "limit_checks";

/** Seconds; sponsor decisions are mostly sub-millisecond to a few ms, with a tail through gas estimation and webhooks. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const BATCH_SIZE_BUCKETS = [1, 2, 5, 10, 20, 50, 100, 200, 500];

export interface Metrics {
  readonly registry: Registry;
  readonly decisions: Counter<"chain_id" | "mode" | "outcome" | "reason">;
  readonly sponsorSeconds: Histogram<"chain_id" | "mode" | "outcome">;
  readonly gasEstimationSeconds: Histogram<"chain_id" | "outcome">;
  readonly l1DataGas: Histogram<"chain_id">;
  readonly gasEstimationFailures: Counter<"chain_id" | "kind">;
  readonly webhookCalls: Counter<"outcome">;
  readonly webhookSeconds: Histogram<"outcome">;
  readonly batchSize: Histogram<"batch">;
  readonly commitSeconds: Histogram<"batch" | "outcome">;
  readonly settlementLagBlocks: Gauge<"chain_id">;
  readonly tokenChargeFailures: Counter<"chain_id" | "version" | "failed">;
  readonly alerts: Counter<"event" | "outcome">;
  readonly eventDeliveries: Counter<"outcome">;
  readonly eventDelaySeconds: Histogram;
  readonly eventBacklog: Gauge;
  readonly eventEndpointsDisabled: Counter;
  readonly ledgerRows: Gauge;
  readonly ledgerBytes: Gauge;
}

export interface MetricsOptions {
  /** The prom-client default process metrics (CPU, memory, event loop, handles): the running service turns them on. */
  processMetrics?: boolean;
}

/** A fresh set of metrics in its own registry: each app built in a test has its own and sees only its own counts. */
export function createMetrics(options: MetricsOptions = {}): Metrics {
  const registry = new Registry();
  if (options.processMetrics) collectDefaultMetrics({ register: registry });
  const registers = [registry];
  return {
    registry,
    decisions: new Counter({
      name: "paymaster_sponsorship_decisions_total",
      help: "Sponsorship decisions by chain, mode and outcome; reason names the rule that refused (or the error kind)",
      labelNames: ["chain_id", "mode", "outcome", "reason"],
      registers,
    }),
    sponsorSeconds: new Histogram({
      name: "paymaster_sponsor_duration_seconds",
      help: "Time to answer a sponsorship request, gas estimation and webhooks included",
      labelNames: ["chain_id", "mode", "outcome"],
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    gasEstimationSeconds: new Histogram({
      name: "paymaster_gas_estimation_duration_seconds",
      help: "Time of one gas estimation through the chain's bundler or node",
      labelNames: ["chain_id", "outcome"],
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    l1DataGas: new Histogram({
      name: "paymaster_l1_data_gas",
      help:
        "The L1 data fee's part of each signed sponsorship's preVerificationGas, in gas, on chains whose fee the " +
        "service computes (an L1 fee spike shows as a rise)",
      labelNames: ["chain_id"],
      buckets: [0, 1_000, 5_000, 10_000, 25_000, 50_000, 100_000, 250_000, 500_000, 1_000_000, 2_500_000, 10_000_000],
      registers,
    }),
    gasEstimationFailures: new Counter({
      name: "paymaster_gas_estimation_failures_total",
      help: "Gas estimations that failed: unavailable (node or bundler down, slow or wrong) or reverted (the operation)",
      labelNames: ["chain_id", "kind"],
      registers,
    }),
    webhookCalls: new Counter({
      name: "paymaster_webhook_calls_total",
      help: "Calls to dApp webhooks by outcome: verified, refused (a no, a bad answer, a refused address), timeout",
      labelNames: ["outcome"],
      registers,
    }),
    webhookSeconds: new Histogram({
      name: "paymaster_webhook_duration_seconds",
      help: "Time of one webhook call, DNS and connection included",
      labelNames: ["outcome"],
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    batchSize: new Histogram({
      name: "paymaster_group_commit_batch_size",
      help: "Items written together by one group commit",
      labelNames: ["batch"],
      buckets: BATCH_SIZE_BUCKETS,
      registers,
    }),
    commitSeconds: new Histogram({
      name: "paymaster_group_commit_duration_seconds",
      help: "Time of one group commit's statement or transaction",
      labelNames: ["batch", "outcome"],
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    settlementLagBlocks: new Gauge({
      name: "paymaster_settlement_lag_blocks",
      help: "Blocks between the chain's head and the last block settlement has read, per chain",
      labelNames: ["chain_id"],
      registers,
    }),
    tokenChargeFailures: new Counter({
      name: "paymaster_token_charge_failures_total",
      help: "Operations of our EntryPoint v0.7-on token paymasters whose postOp reverted (PostOpRevertReason), by what failed: charge (the approve-in-batch paymaster's token pull: their gas came from the paymaster's own deposit) or refund (the up-front paymaster's refund: the whole prefund was kept)",
      labelNames: ["chain_id", "version", "failed"],
      registers,
    }),
    alerts: new Counter({
      name: "paymaster_alerts_total",
      help: "Alert delivery attempts by event (deposit.low, limit.reached) and outcome: sent, retried (a failed attempt to be tried again), failed (given up after an hour)",
      labelNames: ["event", "outcome"],
      registers,
    }),
    eventDeliveries: new Counter({
      name: "paymaster_event_deliveries_total",
      help: "Event delivery attempts to dApps' event endpoints by outcome: delivered (a 2xx answer) or failed (retried later)",
      labelNames: ["outcome"],
      registers,
    }),
    eventDelaySeconds: new Histogram({
      name: "paymaster_event_delivery_delay_seconds",
      help: "From an event's fact (the record, the settlement, the alert's reading) to its delivery, retries included",
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 21600, 86400],
      registers,
    }),
    eventBacklog: new Gauge({
      name: "paymaster_event_backlog",
      help: "Event deliveries queued and not yet made, every instance's and every endpoint's (turned-off ones included)",
      registers,
    }),
    eventEndpointsDisabled: new Counter({
      name: "paymaster_event_endpoints_disabled_total",
      help: "Event endpoints the service turned off because their deliveries failed for a day",
      registers,
    }),
    ledgerRows: new Gauge({
      name: "paymaster_sponsorship_ledger_rows",
      help: "Rows of the sponsorship ledger, every instance's: PostgreSQL's estimate once the table is analyzed, else counted",
      registers,
    }),
    ledgerBytes: new Gauge({
      name: "paymaster_sponsorship_ledger_bytes",
      help: "Bytes the sponsorship ledger takes in the database, its indexes included",
      registers,
    }),
  };
}

export function batchObserver(metrics: Metrics | undefined, batch: BatchName): BatchObserver | undefined {
  if (!metrics) return undefined;
  return (size, seconds, ok) => {
    metrics.batchSize.observe({ batch }, size);
    metrics.commitSeconds.observe({ batch, outcome: ok ? "ok" : "error" }, seconds);
  };
}
