import { type PolicyOf, policiesOfKind } from "../../storage/policies";
import type { QuotaCounter, QuotaHit } from "../../storage/quotaCounter";
import type { SponsorshipSetup } from "../setup";

/** Who sent a request, as the quotas tell clients apart. */
export interface QuotaClient {
  /** The client address: the socket's peer, or X-Forwarded-For from a proxy TRUST_PROXY names (Fastify's request.ip). */
  ip: string;
  /** The Origin header a browser sends; absent for servers and bundlers. */
  origin: string | undefined;
  /** The operation's sender. */
  sender: string;
}

/** A quota the request went over: which, and in how many whole seconds its window ends. */
export interface QuotaRefusal {
  policy: PolicyOf<"RATE_LIMIT">;
  retryAfterSeconds: number;
  message: string;
}

/** Origins longer than this are counted by their start: a client cannot grow the counter's keys without bound. */
const MAX_ORIGIN_KEY = 200;

/** Whose requests one quota counts together. Calls without an Origin share one origin quota (servers, scripts). */
function scopeKeyOf(policy: PolicyOf<"RATE_LIMIT">, client: QuotaClient): string {
  switch (policy.policyData.scope) {
    case "ip":
      return client.ip;
    case "sender":
      return client.sender.toLowerCase();
    case "origin":
      return (client.origin ?? "").toLowerCase().slice(0, MAX_ORIGIN_KEY);
  }
}

const scopeWords = { ip: "client address", sender: "sender", origin: "origin" } as const;

/** Fixed windows from the epoch, each `windowSeconds` long: every instance agrees on them without talking. */
function windowOf(policy: PolicyOf<"RATE_LIMIT">, nowMs: number): { startMs: number; endMs: number } {
  const lengthMs = policy.policyData.windowSeconds * 1000;
  const startMs = Math.floor(nowMs / lengthMs) * lengthMs;
  return { startMs, endMs: startMs + lengthMs };
}

/**
 * The RATE_LIMIT rule: each active quota of the paymaster counts this request in its current window, and the first
 * one over its limit refuses it. Unlike the sponsorship rules it runs on every RPC request, before the method does
 * anything that costs a database write or a chain call (src/actions/admitRequest.ts), and a refusal is an error the
 * client retries later (HTTP 429 with Retry-After), not a `0x` answer: it says "not now", never "not this operation".
 * Quotas are keyed by rule, so one paymaster's never touch another's.
 */
export async function overQuota(
  setup: SponsorshipSetup,
  client: QuotaClient,
  nowMs: number,
  counter: QuotaCounter,
): Promise<QuotaRefusal | undefined> {
  const quotas = policiesOfKind(setup.policies, "RATE_LIMIT");
  if (quotas.length === 0) return undefined;
  const windows = quotas.map((policy) => windowOf(policy, nowMs));
  const hits: QuotaHit[] = quotas.map((policy, i) => ({
    policyId: policy.id,
    windowStartMs: windows[i]?.startMs ?? 0,
    windowEndMs: windows[i]?.endMs ?? 0,
    scopeKey: scopeKeyOf(policy, client),
  }));
  const counts = await counter.count(hits, nowMs);
  for (const [i, policy] of quotas.entries()) {
    const { limit, windowSeconds, scope } = policy.policyData;
    if ((counts[i] ?? 0) <= limit) continue;
    const retryAfterSeconds = Math.max(1, Math.ceil(((windows[i]?.endMs ?? nowMs) - nowMs) / 1000));
    return {
      policy,
      retryAfterSeconds,
      message:
        `Quota "${policy.name}" exceeded: ${limit} requests per ${windowSeconds} s per ${scopeWords[scope]}; ` +
        `try again in ${retryAfterSeconds} s`,
    };
  }
  return undefined;
}
