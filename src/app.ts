import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
} from "fastify";
import { Alerts } from "./alerts/alerts";
import { ContractWatch } from "./chain/contractWatch";
import { DepositBalances } from "./chain/paymasterDeposit";
import { sponsoringChains } from "./chain/sponsoringChains";
import { type AppContext, nowMs } from "./context";
import { ApiError, badRequest, INVALID_REQUEST, messages, RpcError } from "./errors";
import { AccessLog } from "./http/accessLog";
import { adminRoutes } from "./http/admin";
import { auditWrites } from "./http/auditedWrites";
import { auditLogRoutes } from "./http/auditLog";
import { refuseReadScopeBeforeBody } from "./http/auth";
import { chainRoutes } from "./http/chains";
import { answerWhileClosing } from "./http/closing";
import { limitConnections, timeoutOptions } from "./http/connectionLimits";
import { contractRoutes } from "./http/contracts";
import { CredentialCache } from "./http/credentialCache";
import { dashboardRoutes } from "./http/dashboard";
import { throttleFailures } from "./http/failureThrottle";
import { fundingRoutes } from "./http/funding";
import { limitUsageRoutes } from "./http/limitUsage";
import { managementOf, useManagementSchemas } from "./http/management";
import { registerManagementDocs } from "./http/managementDocs";
import { operationsRoutes } from "./http/operations";
import { paymasterRoutes } from "./http/paymasters";
import { policyRoutes } from "./http/policies";
import { sponsorshipRoutes } from "./http/sponsorships";
import { tokenRoutes } from "./http/tokens";
import { TokenUse } from "./http/tokenUse";
import { webhookRoutes } from "./http/webhooks";
import { redactedRequest, redactUrl } from "./logging/redaction";
import { batchObserver, createMetrics } from "./metrics/metrics";
import { registerRpcDocs } from "./rpc/docsRoute";
import { isRpcUrl, RPC_PATH, rpcIdOf, rpcRoutes, sendOutsideRoute } from "./rpc/server";
import { loadSponsorshipSetup } from "./sponsorship/loadSetup";
import { sponsorshipRules } from "./sponsorship/ruleList";
import { InFlightCharges } from "./sponsorship/rules/deposit";
import { SetupCache } from "./sponsorship/setupCache";
import { UnstorableText } from "./storage/database";
import { LimitLedger } from "./storage/limitLedger";
import { CREDENTIALS_CHANNEL } from "./storage/migrations";
import { OutstandingCharges } from "./storage/outstandingCharges";
import { quotaCounterOf } from "./storage/quotaCounter";
import { SignatureCommitments } from "./storage/signatureCommitments";
import { readSetupVersion } from "./storage/sponsorshipSetup";
import { SponsorshipLog } from "./storage/sponsorships";
import { guardOf, webhookSettings } from "./webhooks/settings";

export const MANAGEMENT_PREFIX = "/api/v2/public/sdk";
/** The interface's path and the public service's, so that scripts written for either work unchanged. */
const PAYMASTER_PATHS = ["paymasterParameters", "paymaster"];

/** Builds the service's HTTP app around a context. It never listens: main.ts does, tests use `inject`. */
export async function buildApp(
  ctx: AppContext,
  logger: FastifyServerOptions["logger"] = false,
): Promise<FastifyInstance> {
  const app = Fastify({
    logger,
    logController: new AccessLog(),
    bodyLimit: ctx.bodyLimitBytes,
    // Slow clients are cut off (headers, whole request, idle keep-alive) rather than held for ever.
    ...timeoutOptions(ctx.http),
    // Behind a reverse proxy, the client address (throttling, logs) comes from X-Forwarded-For when configured.
    trustProxy: typeof ctx.trustProxy === "number" ? trustHops(ctx.trustProxy) : (ctx.trustProxy ?? false),
    // An over-long id is an unknown id (404 from its handler), not a 414 from the router.
    routerOptions: { maxParamLength: 2048 },
    // Requests on kept-alive connections during a close get our envelopes (answerWhileClosing), not Fastify's body.
    return503OnClosing: false,
    // A badly encoded URL gets the envelope of its prefix, not Fastify's own body (which bypasses the error handler).
    frameworkErrors: (error, request, reply: FastifyReply) => {
      const url = redactUrl(request.url);
      // Fastify's messages quote the URL as sent; these quote it redacted.
      const message =
        error.code === "FST_ERR_BAD_URL"
          ? `'${url}' is not a valid url component`
          : error.code === "FST_ERR_MAX_PARAM_LENGTH"
            ? `'${url}' has a path segment longer than 2048 characters`
            : error.message;
      if (isRpcUrl(request.url)) {
        return sendOutsideRoute(reply, new RpcError(INVALID_REQUEST, `Invalid request: ${message}`));
      }
      const statusCode = typeof error.statusCode === "number" && error.statusCode < 500 ? error.statusCode : 400;
      return reply.status(statusCode).send({ statusCode, message });
    },
    // Request log lines show URLs with their credentials redacted (the RPC path's apiKey, ?authToken=...), whatever
    // logger the caller configured.
    childLoggerFactory: (logger, bindings, options) =>
      logger.child(bindings, { ...options, serializers: { ...options.serializers, req: redactedRequest } }),
  });

  limitConnections(app.server, ctx.http);
  answerWhileClosing(app, { isRpcUrl, send: sendOutsideRoute, idOf: rpcIdOf });
  acceptJsonBodies(app);
  app.setErrorHandler(errorHandler(ctx.bodyLimitBytes));
  app.setNotFoundHandler((request, reply) => {
    const route = `${request.method} ${redactUrl(request.url)}`;
    if (isRpcUrl(request.url)) {
      const only = `POST ${RPC_PATH.replace(":chainId", "{chainId}").replace(":apiKey", "{apiKey}")}`;
      return sendOutsideRoute(
        reply,
        new RpcError(INVALID_REQUEST, `Invalid request: no route ${route}; use ${only}`, 404),
      );
    }
    return reply.status(404).send({ statusCode: 404, message: `${messages.notFound}: ${route}` });
  });

  throttleFailures(app, {
    config: ctx.failureThrottle,
    isCredentialed: (request) =>
      request.method !== "OPTIONS" && (request.url.startsWith(`${MANAGEMENT_PREFIX}/`) || isRpcUrl(request.url)),
    isRpc: (request) => isRpcUrl(request.url),
    sendRpc: sendOutsideRoute,
    now: ctx.now,
  });

  const setups = new SetupCache(
    (apiKey) => loadSponsorshipSetup(ctx.db, apiKey),
    ctx.setupCacheTtlMs,
    undefined,
    (apiKey) => readSetupVersion(ctx.db, apiKey),
  );
  const chains = sponsoringChains(ctx.chains);
  const contractWatch = ctx.contractChecks
    ? new ContractWatch({ chains, signer: ctx.signer.address, now: ctx.now, ...ctx.contractChecks })
    : undefined;
  if (contractWatch) {
    // The first pass before the app answers, so that no sponsorship is signed for a contract known to fail.
    await contractWatch.start();
    app.addHook("onClose", () => contractWatch.stop());
  }
  const metrics = ctx.metrics ?? createMetrics();
  const outstanding = new OutstandingCharges(ctx.db);
  // One tally of the sponsorships being signed for the deposit rules and the alerts' periodic check.
  const inFlight = new InFlightCharges();
  const alertWebhooks = webhookSettings(ctx.webhooks);
  const alerts = new Alerts({
    db: ctx.db,
    chains,
    outstanding,
    inFlight,
    settings: alertWebhooks,
    guard: guardOf(alertWebhooks, () => app.addresses()),
    now: ctx.now ?? Date.now,
    log: app.log,
    metrics,
  });
  if (ctx.alerts) alerts.start(ctx.alerts);
  // Closing waits for the alerts being decided and a delivery pass under way, so nothing is written after close.
  app.addHook("onClose", () => alerts.stop());
  // Tokens and apiKeys known to this instance are checked without a query; every change of a credential, by this
  // instance or any other writer, reaches it through the database's notifications (src/http/credentialCache.ts).
  const credentials =
    ctx.credentials ?? new CredentialCache(ctx.db, undefined, ctx.now, new TokenUse(ctx.db, () => nowMs(ctx)));
  // An apiKey rotated by any instance is dropped from the sponsorship setups too, not only after their TTL.
  credentials.onAccountChanged((accountId) => setups.forgetAccount(accountId));
  await credentials.follow(ctx.db, CREDENTIALS_CHANNEL);
  app.addHook("onClose", () => credentials.close());
  await registerManagementDocs(app, MANAGEMENT_PREFIX);
  // A change of a paymaster through this instance applies to its next sponsorship and its next management request at
  // once (on PostgreSQL the notification of the change arrives a little after the commit).
  const management = managementOf(
    ctx,
    credentials,
    (apiKey) => {
      setups.invalidate(apiKey);
      credentials.forgetPaymaster(apiKey);
    },
    alerts.settingsChanged,
  );
  await app.register(
    async (api) => {
      useManagementSchemas(api);
      refuseReadScopeBeforeBody(api, credentials);
      auditWrites(api, management.transactions, () => nowMs(ctx));
      for (const path of PAYMASTER_PATHS) paymasterRoutes(api, management, path);
      chainRoutes(api, management, chains, contractWatch);
      fundingRoutes(api, management, PAYMASTER_PATHS);
      contractRoutes(api, management);
      policyRoutes(api, management);
      limitUsageRoutes(api, management);
      webhookRoutes(api, management);
      sponsorshipRoutes(api, management);
      tokenRoutes(api, management);
      auditLogRoutes(api, management);
    },
    { prefix: MANAGEMENT_PREFIX },
  );
  await app.register(rpcRoutes, {
    setups,
    chains,
    metrics,
    quotas: quotaCounterOf(ctx.db),
    sponsor: {
      signer: ctx.signer,
      log: new SponsorshipLog(ctx.db, batchObserver(metrics, "sponsorships")),
      commitments: new SignatureCommitments(ctx.db),
      now: ctx.now,
      ...(contractWatch ? { contractRefusal: (chainId, paymaster) => contractWatch.refusal(chainId, paymaster) } : {}),
      // The rules and their order are the engine's (src/sponsorship/ruleList.ts); the app gives them their parts.
      ...sponsorshipRules({
        ledger: new LimitLedger(ctx.db, batchObserver(metrics, "limit_checks")),
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
        metrics,
      }),
    },
  });
  adminRoutes(app, ctx, credentials);
  operationsRoutes(app, ctx, metrics, chains, contractWatch);
  registerRpcDocs(app);
  dashboardRoutes(app, ctx.dashboardFolder);
  return app;
}

/** Believes the nearest `hops` proxies: Fastify's trustProxy as a number (its type does not list that form). */
const trustHops = (hops: number) => (_address: string, hop: number) => hop < hops;

/**
 * JSON is the only body type. An empty body counts as no body (clients often send the JSON content type on a PATCH
 * that has none), and Fastify's own parser keeps its guard against prototype poisoning.
 */
function acceptJsonBodies(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser("error", "error");
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("application/json", { parseAs: "string" }, (request, body, done) => {
    if (body === "" || (typeof body === "string" && body.trim() === "")) {
      done(null, undefined);
      return;
    }
    parseJson(request, body as string, (error, value) => {
      // Fastify reports prototype poisoning as invalid JSON; say what is actually refused.
      if (error && isJson(body as string)) {
        done(badRequest("Request body must not contain __proto__ or constructor.prototype keys"), undefined);
        return;
      }
      done(error, value);
    });
  });
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Client mistakes keep their exact message; anything else is logged and hidden behind a plain 500. */
function errorHandler(bodyLimitBytes: number) {
  return (error: FastifyError | ApiError, request: FastifyRequest, reply: FastifyReply) => {
    if (error instanceof ApiError) {
      return reply.status(error.statusCode).send({ statusCode: error.statusCode, message: error.message });
    }
    // A route may take more than the service's general limit (a rule's creation: a sender list).
    const clientMessage = clientErrorMessage(error, request.routeOptions.bodyLimit ?? bodyLimitBytes);
    if (clientMessage) return reply.status(400).send({ statusCode: 400, message: clientMessage });
    request.log.error({ err: error }, "request failed");
    return reply.status(500).send({ statusCode: 500, message: messages.internal });
  };
}

/** Fastify's own 4xx errors, reworded to name the problem in the interface's envelope. */
function clientErrorMessage(error: FastifyError, bodyLimitBytes: number): string | undefined {
  switch (error.code) {
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return `Request body is larger than the limit of ${bodyLimitBytes} bytes`;
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return "Content-Type must be application/json";
    case "FST_ERR_CTP_INVALID_JSON_BODY":
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return "Request body is not valid JSON";
    case "FST_ERR_CTP_INVALID_CONTENT_LENGTH":
      return "Content-Length does not match the request body";
  }
  // PostgreSQL text and jsonb cannot hold U+0000 (storage names the refusal), so such a string can never be stored.
  if (error instanceof UnstorableText) return "Text in the request body must not contain the NUL character (\\u0000)";
  if (error instanceof SyntaxError) return "Request body is not valid JSON";
  if (typeof error.statusCode === "number" && error.statusCode >= 400 && error.statusCode < 500) {
    return error.message;
  }
  return undefined;
}
