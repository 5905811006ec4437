import type { FastifyInstance } from "fastify";
import type { SharedParts } from "./appParts";
import { DepositBalances } from "./chain/paymasterDeposit";
import type { AppContext } from "./context";
import { batchObserver } from "./metrics/metrics";
import { rpcRoutes } from "./rpc/server";
import { sponsorshipRules } from "./sponsorship/ruleList";
import { LimitLedger } from "./storage/limitLedger";
import { OutstandingPermits } from "./storage/outstandingPermits";
import { quotaCounterOf } from "./storage/quotaCounter";
import { SignatureCommitments } from "./storage/signatureCommitments";
import { SponsorshipLog } from "./storage/sponsorships";

/** The JSON-RPC endpoint, with the engine's parts: the signer, the ledgers, the rules and what they read. */
export async function registerRpcEndpoint(
  app: FastifyInstance,
  ctx: AppContext,
  { setups, chains, contractWatch, metrics, outstanding, inFlight, alerts }: SharedParts,
): Promise<void> {
  await app.register(rpcRoutes, {
    setups,
    chains,
    metrics,
    quotas: quotaCounterOf(ctx.db),
    sponsor: {
      signer: ctx.signer,
      log: new SponsorshipLog(ctx.db, batchObserver(metrics, "sponsorships"), ctx.now),
      commitments: new SignatureCommitments(ctx.db),
      now: ctx.now,
      outstandingPermit: outstandingPermitOf(new OutstandingPermits(ctx.db)),
      ...(contractWatch ? { contractRefusal: (chainId, paymaster) => contractWatch.refusal(chainId, paymaster) } : {}),
      // The rules and their order are the engine's (src/sponsorship/ruleList.ts); the app gives them their parts.
      ...sponsorshipRules({
        ledger: new LimitLedger(ctx.db, batchObserver(metrics, "limit_checks"), ctx.now),
        limitRefused: alerts.limitRefused,
        deposits: {
          chains,
          balances: new DepositBalances({ now: ctx.now }),
          outstanding,
          inFlight,
          observe: alerts.depositObserved,
        },
        webhooks: ctx.webhooks,
        selfAddresses: () => app.addresses(),
        now: ctx.now,
        metrics,
      }),
    },
  });
}

function outstandingPermitOf(permits: OutstandingPermits) {
  return (chainId: number, sender: string, token: string, nowSeconds: number) =>
    permits.has(chainId, sender, token, nowSeconds);
}
