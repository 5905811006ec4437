import { createHash, timingSafeEqual } from "node:crypto";
import type { FastifyInstance } from "fastify";
import type { ContractWatch } from "../chain/contractWatch";
import type { SponsoringChain } from "../chain/sponsoringChains";
import type { AppContext } from "../context";
import type { Metrics } from "../metrics/metrics";
import { pendingMigrations } from "../storage/migrations";
import { ledgerSize } from "../storage/sponsorshipLedger";
import { contractChecksView } from "./contractChecksView";
import { l1DataFeeView } from "./l1DataFeeView";

/** A readiness probe must answer well within the orchestrator's own timeout, whatever the chains do. */
const PROBE_TIMEOUT_MS = 2_000;

type Reachability = "reachable" | "unreachable" | "not configured";

/**
 * The routes an operator's tooling calls: liveness, readiness and the Prometheus scrape. None of them takes an account
 * token; /metrics takes METRICS_TOKEN when one is configured. Answers never name an RPC or bundler URL (they often
 * carry a provider's API key).
 */
export function operationsRoutes(
  app: FastifyInstance,
  ctx: AppContext,
  metrics: Metrics,
  chains: ReadonlyMap<number, SponsoringChain>,
  contractWatch?: ContractWatch,
): void {
  // Alive: the event loop answers. Nothing else is checked, so a database outage never gets the process restarted.
  app.get("/healthz", async () => ({ status: "ok" }));

  app.get("/readyz", async (_request, reply) => {
    const [database, chainStates] = await Promise.all([
      databaseState(ctx),
      Promise.all([...chains.values()].map(probeChain)),
    ]);
    // Each chain's contract checks as the last pass left them: a probe never waits for the chain's contracts.
    const chainEntries = chainStates.map((chain) => ({
      ...chain,
      contracts: contractChecksView(contractWatch, chain.chainId),
    }));
    const ready = database.database === "ok" && database.migrations === "done";
    // A chain whose contracts fail is degraded, not unready: the instance still serves every other chain.
    const degraded = chainEntries.some(
      (chain) => chain.rpc === "unreachable" || chain.bundler === "unreachable" || chain.contracts.status === "failing",
    );
    const status = !ready ? "unready" : degraded ? "degraded" : "ready";
    return reply.status(ready ? 200 : 503).send({
      status,
      database: database.database,
      migrations: database.migrations,
      // Opened at start (the service does not start without it): which kind of key signs, and the address the
      // paymasters must accept, so an operator can check a rotation or an HSM set-up from outside.
      signer: { kind: ctx.signer.kind, address: ctx.signer.address },
      chains: chainEntries,
    });
  });

  app.get("/metrics", async (request, reply) => {
    if (ctx.metricsToken && !bearerMatches(request.headers.authorization, ctx.metricsToken.reveal())) {
      return reply
        .status(401)
        .header("www-authenticate", 'Bearer realm="metrics"')
        .send({ statusCode: 401, message: "GET /metrics needs the header Authorization: Bearer <METRICS_TOKEN>" });
    }
    await refreshLedgerSize(ctx, metrics);
    return reply.header("content-type", metrics.registry.contentType).send(await metrics.registry.metrics());
  });
}

async function databaseState(ctx: AppContext): Promise<{ database: "ok" | "unreachable"; migrations: string }> {
  try {
    const pending = await pendingMigrations(ctx.db);
    return { database: "ok", migrations: pending === 0 ? "done" : `${pending} pending` };
  } catch {
    return { database: "unreachable", migrations: "unknown" };
  }
}

async function probeChain(chain: SponsoringChain) {
  const [rpc, bundler] = await Promise.all([probe(chain.rpcUrl), probe(chain.bundlerUrl)]);
  return { chainId: chain.chainId, name: chain.name, rpc, bundler, l1DataFee: l1DataFeeView(chain).model };
}

/** One eth_chainId call: any JSON-RPC result within the timeout counts as reachable. */
async function probe(url: string | undefined): Promise<Reachability> {
  if (!url) return "not configured";
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
      signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
    });
    const body = (await response.json()) as { result?: unknown };
    return response.ok && body.result !== undefined ? "reachable" : "unreachable";
  } catch {
    return "unreachable";
  }
}

/** Compares digests, so the time taken says nothing about how much of the token was right. */
function bearerMatches(header: string | undefined, token: string): boolean {
  const match = /^Bearer (.+)$/i.exec(header ?? "");
  if (!match) return false;
  const digest = (text: string) => createHash("sha256").update(text).digest();
  return timingSafeEqual(digest(match[1] as string), digest(token));
}

/**
 * The ledger's size, read when scraped (two catalogue reads). A database that does not answer leaves the last values:
 * the scrape still reports everything else, and /readyz tells the outage.
 */
async function refreshLedgerSize(ctx: AppContext, metrics: Metrics): Promise<void> {
  try {
    const size = await ledgerSize(ctx.db);
    metrics.ledgerRows.set(size.rows);
    metrics.ledgerBytes.set(size.bytes);
  } catch {
    // Kept as they were.
  }
}
