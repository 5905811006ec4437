import { inspect } from "node:util";
import type { FastifyServerOptions } from "fastify";
import { DEFAULT_ALERT_TIMERS } from "./alerts/alerts";
import { buildApp } from "./app";
import { CONTRACT_CHECK_INTERVAL_MS } from "./chain/contractWatch";
import { LOCAL_CHAIN_ID } from "./chain/sponsoringChains";
import { type Config, ConfigError, loadConfig } from "./config";
import { wantsLocalChain } from "./devChain/localChainWanted";
import { LogDestination } from "./logging/logDestination";
import { createMetrics } from "./metrics/metrics";
import { runtimeWarning } from "./runtimeSupport";
import { startSettlement } from "./settlement/watcher";
import { startShutdownWatchdog } from "./shutdownWatchdog";
import { openSigner } from "./signer/openSigner";
import { countAccounts, createAccount } from "./storage/accounts";
import { adminSecret, DataFolderBusyError } from "./storage/dataFolder";
import { openStorage } from "./storage/open";
import { DataFolderPermissionError } from "./storage/privateFolder";
import { loadWebhookSigningKey } from "./webhooks/signingKey";

/** How long past SHUTDOWN_TIMEOUT_MS the watchdog thread waits before it kills a process whose exit is stuck. */
const WATCHDOG_GRACE_MS = 1_000;
/** How long a stop waits for its last log lines to be written before it exits. */
const LOG_FLUSH_MS = 500;

/** Starts the service: configuration, storage, the HTTP app; stops cleanly on SIGTERM and SIGINT. */
async function main(): Promise<void> {
  // A reader of stdout or stderr that has gone makes their writes fail with EPIPE; without a listener that error would
  // end the process from wherever it was written. The log lines do not use these streams (see LogDestination).
  process.stdout.on("error", () => {});
  process.stderr.on("error", () => {});
  const config = loadConfig();
  const logs = new LogDestination(process.stdout.fd);
  // A key in a PKCS#11 token needs nothing of the data folder: it is opened first, so that a wrong module, token, key
  // or PIN stops the start before the database is made, and no key file is read or made. A key file made on first
  // start goes into the data folder, which the storage makes and locks, so that one is opened after it.
  const tokenSigner = config.signerKey.kind === "pkcs11" ? openSigner(config.signerKey) : undefined;
  const storage = await openStorage(config, "service");
  const signer = tokenSigner ?? openSigner(config.signerKey);
  const webhookSigningKey = loadWebhookSigningKey(config.webhooks.signingKey);
  const { db } = storage;
  const embedded = storage.folder !== undefined;

  // The service's one clock: every part of it reads the time from the context (tests set their own).
  const now = () => Date.now();

  // A newcomer on a fresh embedded start gets an account right away; its token is shown once and never logged.
  if (embedded && (await countAccounts(db)) === 0) {
    const account = await createAccount(db, "development", now());
    // To the terminal only, never through the logger, whose lines may be kept.
    process.stdout.write(
      `Created the development account. Its authToken, shown only this once:\n${account.authToken}\n`,
    );
  }

  // The embedded default's development chain: anvil, kept in the data folder, when 31337 has no RPC (LOCAL_CHAIN=auto).
  // Loaded only then: anvil and the contracts it deploys are development packages, absent from a production install.
  const localChainModule = wantsLocalChain(config) ? await loadLocalChain() : undefined;
  const localChain = await localChainModule?.startLocalChain({
    dataDir: config.dataDir,
    signer: signer.address,
    warn: (m) => process.stderr.write(`${m}\n`),
  });
  const chains =
    localChain && localChainModule ? localChainModule.withLocalChain(config.chains, localChain) : config.chains;

  const metrics = createMetrics({ processMetrics: true });
  const app = await buildApp(
    {
      db,
      signer,
      chains,
      now,
      bodyLimitBytes: config.bodyLimitBytes,
      http: config.http,
      failureThrottle: config.failureThrottle,
      trustProxy: config.trustProxy,
      webhooks: {
        allowPrivate: config.webhooks.allowPrivate,
        timeoutMs: config.webhooks.timeoutMs,
        signingKey: webhookSigningKey,
      },
      adminSecret: embedded ? adminSecret(config.dataDir) : undefined,
      metrics,
      metricsToken: config.metricsToken,
      alerts: DEFAULT_ALERT_TIMERS,
      dashboardFolder: config.dashboardFolder,
      // Every chain with a node is checked, except the development chain this process deployed itself just now.
      contractChecks: {
        intervalMs: CONTRACT_CHECK_INTERVAL_MS,
        exclude: localChain ? [LOCAL_CHAIN_ID] : [],
      },
    },
    await loggerOptions(config, logs),
  );
  const address = await app.listen({ port: config.port, host: config.host });
  const settlement = startSettlement({ db, chains, now }, { log: app.log, metrics });
  const port = app.server.address();
  storage.folder?.update({ host: config.host, port: typeof port === "object" && port ? port.port : config.port });
  app.log.info(
    {
      database: embedded ? `PGlite in ${config.dataDir}` : "PostgreSQL",
      chains: [...chains.keys()],
      signer: signer.address,
      signerKind: signer.kind,
    },
    `paymaster service listening on ${address}`,
  );
  const outdated = runtimeWarning();
  if (outdated) app.log.warn(outdated);
  if ("extractable" in signer && signer.extractable) {
    app.log.warn(
      `the signer key in the PKCS#11 token may be extracted (CKA_EXTRACTABLE): generate it in the token as non-extractable so that it can never leave it`,
    );
  }
  if (localChain && localChainModule) {
    app.log.info({ startMs: localChain.timings }, localChainModule.describeLocalChain(localChain));
  }
  app.log.info(
    `webhook addresses in private, loopback and link-local ranges are ${config.webhooks.allowPrivate ? "allowed" : "refused"}: ${config.webhooks.allowPrivateReason}`,
  );
  if (!config.metricsToken) {
    app.log.info("GET /metrics needs no token (METRICS_TOKEN is not set): keep the port away from the public network");
  }

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    // The deadline below is a timer of this thread; the watchdog ends the process even if this thread is stuck.
    startShutdownWatchdog(config.shutdownTimeoutMs + WATCHDOG_GRACE_MS);
    // How long the stop really takes, for the log line: real time, not the service's clock.
    const startedMs = Date.now();
    app.log.info(
      `${signal} received: answering requests in flight, then stopping (at most ${config.shutdownTimeoutMs} ms)`,
    );
    // Past the bound, whatever is left is cut: an orchestrator would kill the process a little later anyway.
    const deadline = setTimeout(() => {
      app.log.error(`shutdown did not finish within ${config.shutdownTimeoutMs} ms; exiting with requests unanswered`);
      app.server.closeAllConnections();
      void logs.flush(LOG_FLUSH_MS).then(() => process.exit(1));
    }, config.shutdownTimeoutMs);
    deadline.unref();
    // Fastify stops accepting and waits for the requests in flight; a kept-alive connection that goes idle meanwhile
    // is closed as soon as it does, instead of after the keep-alive timeout (72 s).
    const closeIdle = setInterval(() => app.server.closeIdleConnections(), 50);
    try {
      // Settlement's pass under way ends after its current range; requests in flight wait for their records (the group
      // commit writes them before they are answered), so once both are done nothing answered is unrecorded.
      await Promise.all([settlement.stop(), app.close()]);
      clearInterval(closeIdle);
      await localChain?.stop();
      await storage.close();
      signer.close?.();
    } catch (error) {
      app.log.error({ err: error }, "shutdown failed");
      await logs.flush(LOG_FLUSH_MS);
      process.exit(1);
    }
    app.log.info(`stopped in ${Date.now() - startedMs} ms`);
    await logs.flush(LOG_FLUSH_MS);
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
}

/** The local chain's code, or a message that says what to do where the development packages are not installed. */
async function loadLocalChain() {
  try {
    return await import("./devChain/localChain");
  } catch (error) {
    if ((error as { code?: string }).code !== "ERR_MODULE_NOT_FOUND") throw error;
    throw new ConfigError(
      "the local development chain (LOCAL_CHAIN=auto, chain 31337 without an rpcUrl) needs the development packages, " +
        "which this install lacks: set LOCAL_CHAIN=off, or give 31337 an rpcUrl in the chains file",
    );
  }
}

/**
 * JSON lines, the secrets of request headers redacted; readable lines on a development terminal (pino-pretty, run on
 * this thread rather than as a pino transport, whose worker is flushed at exit in the same way). Both go to `logs`.
 */
async function loggerOptions(config: Config, logs: LogDestination): Promise<FastifyServerOptions["logger"]> {
  const options = {
    level: config.logLevel,
    redact: [
      "req.headers.authtoken",
      "req.headers.apikey",
      'req.headers["x-admin-secret"]',
      "req.headers.authorization",
    ],
  };
  const prettify = config.prettyLogs ? await prettyPrinter() : undefined;
  const stream = prettify ? { write: (line: string) => logs.write(prettify(line)) } : logs;
  return { ...options, stream };
}

/** pino-pretty is a development package: a production install without it logs JSON, as it should. */
async function prettyPrinter(): Promise<((line: string) => string) | undefined> {
  try {
    const { prettyFactory } = await import("pino-pretty");
    return prettyFactory({});
  } catch (error) {
    if ((error as { code?: string }).code !== "ERR_MODULE_NOT_FOUND") throw error;
    return undefined;
  }
}

main().catch((error) => {
  // LocalChainError is matched by name: its module is loaded only when the local chain runs.
  const known =
    error instanceof ConfigError || error instanceof DataFolderBusyError || error instanceof DataFolderPermissionError;
  if (known || error?.name === "LocalChainError") {
    process.stderr.write(`Cannot start: ${error.message}\n`);
  } else {
    process.stderr.write(`Cannot start: ${inspect(error)}\n`);
  }
  process.exit(1);
});
