import type { FastifyInstance, FastifyServerOptions } from "fastify";
import { generatePrivateKey } from "viem/accounts";
import { buildApp, MANAGEMENT_PREFIX } from "../../src/app";
import { type ChainConfig, Secret } from "../../src/config";
import type { AppContext } from "../../src/context";
import { createSigner } from "../../src/signer/signer";
import { createAccount } from "../../src/storage/accounts";
import type { Database } from "../../src/storage/database";
import type { ChannelListener } from "../../src/storage/pgListener";
import { openTestDatabase, openTwoInstanceDatabases } from "./database";
import { testLookup } from "./dns";

export const TEST_CHAINS: ReadonlyMap<number, ChainConfig> = new Map([
  [31337, { chainId: 31337, name: "local" }],
  [80002, { chainId: 80002, name: "Polygon Amoy" }],
]);

export interface Reply {
  status: number;
  body: { statusCode: number; message: string; data?: unknown } & Record<string, unknown>;
}

export interface CallOptions {
  token?: string;
  apiKey?: string;
  body?: unknown;
  /** Sent as is, with the given content type, instead of `body` as JSON. */
  raw?: { payload: string; contentType: string };
  query?: Record<string, string>;
  headers?: Record<string, string>;
}

export interface TestApp {
  app: FastifyInstance;
  db: Database;
  ctx: AppContext;
  /** Calls a management endpoint (path relative to the management prefix) through `app.inject`. */
  call(method: string, path: string, options?: CallOptions): Promise<Reply>;
  /** A new account and its token. */
  account(name?: string): Promise<{ id: string; token: string }>;
  /** A new account with one paymaster: its token, apiKey and paymasterId. */
  dapp(options?: { name?: string; chainId?: number; token?: string }): Promise<Dapp>;
  /**
   * Resolves once every notification committed before the call has reached the listeners of the apps on this
   * database, and been acted on (a barrier on each: `ChannelListener.barrier`). On PostgreSQL a change is heard a
   * moment after its commit: a test that must know an app has heard of the changes so far, or would have heard of
   * one, waits for this rather than for time.
   */
  notificationsHeard(): Promise<void>;
  close(): Promise<void>;
}

export interface Dapp {
  accountId: string;
  token: string;
  apiKey: string;
  paymasterId: string;
  chainId: number;
}

/** `logger`: Fastify's logger options (tests that read the log pass a capturing stream); silent by default. */
export async function startTestApp(
  overrides: Partial<AppContext> = {},
  logger: FastifyServerOptions["logger"] = process.env.TEST_LOG ? { level: "error" } : false,
): Promise<TestApp> {
  // A database given in `overrides` is the caller's to close (tests that run two apps on one database).
  const ownsDatabase = overrides.db === undefined;
  const { db, listeners } = recordingListeners(overrides.db ?? (await openTestDatabase()));
  const ctx: AppContext = {
    chains: TEST_CHAINS,
    bodyLimitBytes: 64 * 1024,
    signer: createSigner(generatePrivateKey()),
    // Like the embedded default: the tests' webhook servers listen on 127.0.0.1. The DNS is the tests' own.
    webhooks: { allowPrivate: true, timeoutMs: 2000, signingKey: new Secret(generatePrivateKey()), lookup: testLookup },
    // Tests send many wrong credentials from one address on purpose; test/http/failureThrottle.test.ts turns it on.
    failureThrottle: { maxFailures: 0, windowMs: 60_000 },
    // The service's clock: the wall clock unless the test sets its own (to move it, or to hold it still).
    now: () => Date.now(),
    ...overrides,
    db,
  };
  const app = await buildApp(ctx, logger);
  let counter = 0;

  const call: TestApp["call"] = async (method, path, options = {}) => {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token !== undefined) headers.authToken = options.token;
    if (options.apiKey !== undefined) headers.apiKey = options.apiKey;
    let payload: string | undefined;
    if (options.raw) {
      payload = options.raw.payload;
      headers["content-type"] = options.raw.contentType;
    } else if (options.body !== undefined) {
      payload = JSON.stringify(options.body);
      headers["content-type"] = "application/json";
    }
    const response = await app.inject({
      method: method as "GET",
      url: `${MANAGEMENT_PREFIX}/${path}`,
      headers,
      payload,
      query: options.query,
    });
    return { status: response.statusCode, body: response.json() };
  };

  const account: TestApp["account"] = async (name = `account-${++counter}`) => {
    const created = await createAccount(db, name, ctx.now());
    return { id: created.id, token: created.authToken };
  };

  const dapp: TestApp["dapp"] = async (options = {}) => {
    const owner = options.token ? { id: "", token: options.token } : await account();
    const chainId = options.chainId ?? 31337;
    const reply = await call("POST", "paymasterParameters", {
      token: owner.token,
      body: { name: options.name ?? `dapp-${++counter}`, type: "HYBRID", chainId, version: "1.0.0" },
    });
    if (reply.status !== 200) throw new Error(`dapp creation failed: ${JSON.stringify(reply.body)}`);
    const data = reply.body.data as { apiKey: string; paymasterId: string };
    return { accountId: owner.id, token: owner.token, apiKey: data.apiKey, paymasterId: data.paymasterId, chainId };
  };

  return {
    app,
    db,
    ctx,
    call,
    account,
    dapp,
    async notificationsHeard() {
      await Promise.all([...listeners].map((listener) => listener.barrier()));
    },
    async close() {
      await app.close();
      if (ownsDatabase) await db.close();
    },
  };
}

export interface TwoInstances {
  a: TestApp;
  b: TestApp;
  /** A's and B's databases: one PGlite for both, or two connection pools on one PostgreSQL schema. */
  first: Database;
  second: Database;
  close(): Promise<void>;
}

/**
 * Two instances of the service on one database, as two processes share one (openTwoInstanceDatabases), each started
 * with `overrides`, or with what it returns for the instance's database.
 */
export async function startTwoInstances(
  overrides: Partial<AppContext> | ((db: Database, instance: "a" | "b") => Partial<AppContext>) = {},
): Promise<TwoInstances> {
  const { first, second, close } = await openTwoInstanceDatabases();
  const start = (db: Database, instance: "a" | "b") =>
    startTestApp({ ...(typeof overrides === "function" ? overrides(db, instance) : overrides), db });
  const a = await start(first, "a");
  const b = await start(second, "b");
  return {
    a,
    b,
    first,
    second,
    async close() {
      await a.close();
      await b.close();
      await close();
    },
  };
}

/** Per database, the one object its apps get (`t.db`), which records the listeners they open. */
const recorded = new WeakMap<Database, { db: Database; listeners: Set<ChannelListener> }>();

function recordingListeners(db: Database): { db: Database; listeners: Set<ChannelListener> } {
  const known = recorded.get(db);
  if (known) return known;
  const listeners = new Set<ChannelListener>();
  const recording: Database = {
    ...db,
    async listen(channel, handlers) {
      const listener = await db.listen(channel, handlers);
      listeners.add(listener);
      return {
        get backendPid() {
          return listener.backendPid;
        },
        barrier: () => listener.barrier(),
        async close() {
          listeners.delete(listener);
          await listener.close();
        },
      };
    },
  };
  const entry = { db: recording, listeners };
  recorded.set(db, entry);
  recorded.set(recording, entry);
  return entry;
}
