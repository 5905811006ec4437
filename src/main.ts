import { buildApp } from "./app";
import {
  describeLocalChain,
  LocalChainError,
  startLocalChain,
  wantsLocalChain,
  withLocalChain,
} from "./chain/localChain";
import { startSettlement } from "./chain/settlement";
import { createSigner } from "./chain/signer";
import { loadSignerKey } from "./chain/signerKey";
import { ConfigError, loadConfig } from "./config";
import { countAccounts, createAccount } from "./storage/accounts";
import { adminSecret, DataFolderBusyError } from "./storage/dataFolder";
import { openStorage } from "./storage/open";
import { loadWebhookSigningKey } from "./webhooks/signingKey";

/** Starts the service: configuration, storage, the HTTP app; stops cleanly on SIGTERM and SIGINT. */
async function main(): Promise<void> {
  const config = loadConfig();
  const storage = await openStorage(config, "service");
  const signer = createSigner(loadSignerKey(config.signerKey));
  const webhookSigningKey = loadWebhookSigningKey(config.webhooks.signingKey);
  const { db } = storage;
  const embedded = storage.folder !== undefined;

  // A newcomer on a fresh embedded start gets an account right away; its token is shown once and never logged.
  if (embedded && (await countAccounts(db)) === 0) {
    const account = await createAccount(db, "development");
    console.log(`Created the development account. Its authToken, shown only this once:\n${account.authToken}`);
  }

  // The embedded default's development chain: anvil, kept in the data folder, when 31337 has no RPC (LOCAL_CHAIN=auto).
  const localChain = wantsLocalChain(config)
    ? await startLocalChain({ dataDir: config.dataDir, signer: signer.address, warn: (m) => console.error(m) })
    : undefined;
  const chains = localChain ? withLocalChain(config.chains, localChain) : config.chains;

  const app = await buildApp(
    {
      db,
      signer,
      chains,
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
    },
    {
      level: config.logLevel,
      redact: ["req.headers.authtoken", "req.headers.apikey", 'req.headers["x-admin-secret"]'],
    },
  );
  const address = await app.listen({ port: config.port, host: config.host });
  const settlement = startSettlement({ db, chains }, { log: app.log });
  const port = app.server.address();
  storage.folder?.update({ host: config.host, port: typeof port === "object" && port ? port.port : config.port });
  app.log.info(
    {
      database: embedded ? `PGlite in ${config.dataDir}` : "PostgreSQL",
      chains: [...chains.keys()],
      signer: signer.address,
    },
    `paymaster service listening on ${address}`,
  );
  if (localChain) app.log.info({ startMs: localChain.timings }, describeLocalChain(localChain));
  app.log.info(
    `webhook addresses in private, loopback and link-local ranges are ${config.webhooks.allowPrivate ? "allowed" : "refused"}: ${config.webhooks.allowPrivateReason}`,
  );

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info(`${signal} received, shutting down`);
    await settlement.stop();
    await app.close();
    await localChain?.stop();
    await storage.close();
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
}

main().catch((error) => {
  if (error instanceof ConfigError || error instanceof DataFolderBusyError || error instanceof LocalChainError) {
    console.error(`Cannot start: ${error.message}`);
  } else {
    console.error("Cannot start:", error);
  }
  process.exit(1);
});
