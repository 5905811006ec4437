import type { FastifyInstance } from "fastify";
import { Alerts } from "./alerts/alerts";
import { ContractWatch } from "./chain/contractWatch";
import { type SponsoringChain, sponsoringChains } from "./chain/sponsoringChains";
import type { AppContext } from "./context";
import { DEFAULT_EVENT_TIMERS, EventDelivery } from "./events/delivery";
import { CredentialCache } from "./http/credentialCache";
import { TokenUse } from "./http/tokenUse";
import { createMetrics, type Metrics } from "./metrics/metrics";
import { loadSponsorshipSetup } from "./sponsorship/loadSetup";
import { InFlightCharges } from "./sponsorship/rules/deposit";
import { SetupCache } from "./sponsorship/setupCache";
import { CREDENTIALS_CHANNEL } from "./storage/migrations";
import { OutstandingCharges } from "./storage/outstandingCharges";
import { readSetupVersion } from "./storage/sponsorshipSetup";
import { guardOf, webhookSettings } from "./webhooks/settings";

/** What the management API and the RPC endpoint share in one app: its caches, watches, tallies and metrics. */
export interface SharedParts {
  setups: SetupCache;
  chains: ReadonlyMap<number, SponsoringChain>;
  /** Absent when the context asks for no contract checks. */
  contractWatch: ContractWatch | undefined;
  metrics: Metrics;
  outstanding: OutstandingCharges;
  /** One tally of the sponsorships being signed for the deposit rules and the alerts' periodic check. */
  inFlight: InFlightCharges;
  alerts: Alerts;
  /** Delivers the event endpoints' queues (every instance works them; each endpoint is one instance's at a time). */
  events: EventDelivery;
  credentials: CredentialCache;
}

/**
 * Makes and starts the shared parts, each stopped when the app closes. The contracts are checked and the credentials
 * followed before this returns, so the app answers nothing before either is known.
 */
export async function startSharedParts(app: FastifyInstance, ctx: AppContext): Promise<SharedParts> {
  const setups = new SetupCache(
    (apiKey) => loadSponsorshipSetup(ctx.db, apiKey),
    ctx.setupCacheTtlMs,
    undefined,
    (apiKey) => readSetupVersion(ctx.db, apiKey),
  );
  const chains = sponsoringChains(ctx.chains);
  const contractWatch = await watchContracts(app, ctx, chains);
  const metrics = ctx.metrics ?? createMetrics();
  const outstanding = new OutstandingCharges(ctx.db);
  const inFlight = new InFlightCharges();
  const alerts = startAlerts(app, ctx, { chains, outstanding, inFlight, metrics });
  const events = await startEventDelivery(app, ctx, metrics);
  const credentials = await followCredentials(app, ctx, setups);
  return { setups, chains, contractWatch, metrics, outstanding, inFlight, alerts, events, credentials };
}

/** Our contracts checked on every chain, when the context asks: the first pass before the app answers. */
async function watchContracts(
  app: FastifyInstance,
  ctx: AppContext,
  chains: ReadonlyMap<number, SponsoringChain>,
): Promise<ContractWatch | undefined> {
  if (!ctx.contractChecks) return undefined;
  const contractWatch = new ContractWatch({ chains, signer: ctx.signer.address, now: ctx.now, ...ctx.contractChecks });
  // The first pass before the app answers, so that no sponsorship is signed for a contract known to fail.
  await contractWatch.start();
  app.addHook("onClose", () => contractWatch.stop());
  return contractWatch;
}

/** The alerts, with their background work when the context asks for it. */
function startAlerts(
  app: FastifyInstance,
  ctx: AppContext,
  { chains, outstanding, inFlight, metrics }: Pick<SharedParts, "chains" | "outstanding" | "inFlight" | "metrics">,
): Alerts {
  const alertWebhooks = webhookSettings(ctx.webhooks);
  const alerts = new Alerts({
    db: ctx.db,
    chains,
    outstanding,
    inFlight,
    settings: alertWebhooks,
    guard: guardOf(alertWebhooks, () => app.addresses()),
    now: ctx.now,
    log: app.log,
    metrics,
  });
  if (ctx.alerts) alerts.start(ctx.alerts);
  // Closing waits for the alerts being decided and a delivery pass under way, so nothing is written after close.
  app.addHook("onClose", () => alerts.stop());
  return alerts;
}

/** The event endpoints' delivery, listening for queued deliveries before the app answers. */
async function startEventDelivery(app: FastifyInstance, ctx: AppContext, metrics: Metrics): Promise<EventDelivery> {
  const settings = webhookSettings(ctx.webhooks);
  const events = new EventDelivery({
    db: ctx.db,
    settings,
    guard: guardOf(settings, () => app.addresses()),
    now: ctx.now,
    log: app.log,
    metrics,
    timers: ctx.events ?? DEFAULT_EVENT_TIMERS,
  });
  await events.start();
  // Closing waits for the attempts under way, so nothing is written after close.
  app.addHook("onClose", () => events.stop());
  return events;
}

/**
 * Tokens and apiKeys known to this instance are checked without a query; every change of a credential, by this
 * instance or any other writer, reaches it through the database's notifications (src/http/credentialCache.ts).
 */
async function followCredentials(app: FastifyInstance, ctx: AppContext, setups: SetupCache): Promise<CredentialCache> {
  const credentials =
    ctx.credentials ?? new CredentialCache(ctx.db, ctx.now, undefined, new TokenUse(ctx.db, () => ctx.now()));
  // An apiKey rotated by any instance is dropped from the sponsorship setups too, not only after their TTL.
  credentials.onAccountChanged((accountId) => setups.forgetAccount(accountId));
  await credentials.follow(ctx.db, CREDENTIALS_CHANNEL);
  app.addHook("onClose", () => credentials.close());
  return credentials;
}
