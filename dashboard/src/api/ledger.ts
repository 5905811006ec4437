import { api, dapp, unwrap } from "./client";

/** One answer of the paymaster's RPC endpoint, as the ledger keeps it. */
export interface LedgerRow {
  userOpHash: string | null;
  sender: string;
  nonce: string;
  chainId: number;
  entryPoint: string | null;
  mode: "SPONSORED" | "ERC20";
  status: "pending" | "mined" | "expired" | "refused";
  reason: string | null;
  worstCaseWei: string | null;
  actualWei: string | null;
  transactionHash: string | null;
  createdAt: number;
  settledAt: number | null;
}

export interface StatsBucket {
  start: number;
  counts: { pending: number; mined: number; expired: number; refused: number };
  spendWei: string;
  heldWei: string;
}

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
