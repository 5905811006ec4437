import { api, dapp, unwrap } from "./client";
import type { paths } from "./schema";

type Sponsorships = paths["/api/v2/public/sdk/sponsorships"]["get"]["responses"][200]["content"]["application/json"];
type Stats = paths["/api/v2/public/sdk/sponsorships/stats"]["get"]["responses"][200]["content"]["application/json"];

/** One answer of the paymaster's RPC endpoint, as the ledger keeps it (the API's own type, generated). */
export type LedgerRow = Sponsorships["data"][number];

/** Counts and spend of one bucket of the stats (the API's own type, generated). */
export type StatsBucket = Stats["data"]["buckets"][number];

export interface LedgerFilters {
  status?: string;
  sender?: string;
  from?: string;
  to?: string;
}

/** A page of the ledger, newest first. */
export async function ledgerPage(
  apiKey: string,
  filters: LedgerFilters,
  cursor: string | undefined,
): Promise<{ rows: LedgerRow[]; nextCursor: string | null }> {
  const query = {
    ...filters,
    status: filters.status as LedgerRow["status"] | undefined,
    limit: "20",
    ...(cursor ? { cursor } : {}),
  };
  const answer = api.GET("/api/v2/public/sdk/sponsorships", { ...dapp(apiKey), params: { query } });
  const rows = await unwrap(answer);
  return { rows, nextCursor: (await answer).data?.nextCursor ?? null };
}

/** Counts and spend per bucket over a range. */
export async function ledgerStats(
  apiKey: string,
  bucket: "hour" | "day",
  from: number,
  to: number,
): Promise<StatsBucket[]> {
  const data = await unwrap(
    api.GET("/api/v2/public/sdk/sponsorships/stats", {
      ...dapp(apiKey),
      params: { query: { bucket, from: String(from), to: String(to) } },
    }),
  );
  return data.buckets;
}
