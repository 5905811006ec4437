import type { FastifyInstance } from "fastify";
import { sponsorshipPage, sponsorshipStats } from "../actions/sponsorshipLedger";
import { ledgerSchema, statsSchema } from "../schemas/management/sponsorships";
import { dappGuard } from "./auth";
import { success } from "./envelope";
import { type Management, typed } from "./management";

/** An extension of the interface: the paymaster's sponsorship ledger, a page at a time, and its statistics. */
export function sponsorshipRoutes(app: FastifyInstance, { actions, credentials }: Management): void {
  const api = typed(app);
  const dapp = dappGuard(credentials);

  api.get("/sponsorships", { schema: ledgerSchema, preValidation: dapp.preValidation }, async (request) => {
    const { items, nextCursor } = await sponsorshipPage(actions, dapp.of(request).paymaster, request.query);
    return { ...success("Sponsorships fetched", items), nextCursor };
  });

  api.get("/sponsorships/stats", { schema: statsSchema, preValidation: dapp.preValidation }, async (request) => {
    const stats = await sponsorshipStats(actions, dapp.of(request).paymaster, request.query);
    return success("Sponsorship stats fetched", {
      bucket: stats.bucket,
      from: stats.from,
      to: stats.to,
      // Wei as decimal texts: sums pass 2^53 quickly. Dollars only where the chain has a price.
      buckets: stats.buckets.map((b) => ({
        start: b.startMs,
        counts: b.counts,
        spendWei: b.spendWei.toString(),
        heldWei: b.heldWei.toString(),
        ...b.dollars,
      })),
      ...(stats.nativeUsdPrice
        ? {
            nativeUsdPrice: stats.nativeUsdPrice.price,
            ...(stats.nativeUsdPrice.error ? { nativeUsdPriceError: stats.nativeUsdPrice.error } : {}),
          }
        : {}),
    });
  });
}
