// The service's local chain with its EntryPoint stacks, Alto bundling for the EntryPoints a test names, and the service
// on that chain (its bundlerUrl Alto), listening on a real port: what the e2e tests that send operations through
// viem's bundler client and our ERC-7677 endpoint start. The dApp is the test's own; `endpoint(dapp)` is its URL.
//
//   stack = await startAltoStack({ entryPoints: ["0.6", "0.7"], deposits: { versions: ["0.7"], value } });
//   dapp = await chainDapp(stack.t);
//   const bundler = bundlerFor(stack, stack.endpoint(dapp), account, sent);
//   after(() => stack?.stop());
import { http } from "viem";
import { createBundlerClient, createPaymasterClient, type SmartAccount } from "viem/account-abstraction";
import { ENTRY_POINT_V06_ADDRESS } from "../../src/bindings/entryPoints/entryPoint";
import type { ChainConfig, LaterEntryPointVersion } from "../../src/config";
import { LOCAL_TOKENS } from "../../src/devChain/localTokens";
import { anvilKeys } from "../contracts/fixtures";
import { depositForFunding, type LocalStacks, startLocalStacks } from "../contracts/v07/localStacks";
import { type Alto, startAlto } from "./alto";
import { type Dapp, startTestApp, type TestApp } from "./app";

type Version = "0.6" | LaterEntryPointVersion;

export interface AltoStackOptions {
  /** The EntryPoints Alto bundles for, in this order ("0.6": the canonical v0.6 one, the others: their stack's). */
  entryPoints: readonly Version[];
  /** The local fee tokens (TUSD) in the service's chain entry, for ERC20 mode. */
  feeTokens?: boolean;
  /** `value` into the local stacks' funding wallet's balance in our verifying paymaster of each version named. */
  deposits?: { versions: readonly Version[]; value: bigint };
}

export interface AltoStack {
  env: LocalStacks;
  alto: Alto;
  t: TestApp;
  /** The dApp's sponsorship endpoint on chain 31337, on the port the service listens on. */
  endpoint(dapp: Dapp): string;
  /** Closes the service, then stops Alto, then the chain, each even if the one before failed. */
  stop(): Promise<void>;
}

export async function startAltoStack(options: AltoStackOptions): Promise<AltoStack> {
  const env = await startLocalStacks();
  let alto: Alto | undefined;
  let t: TestApp | undefined;
  const stop = async () => {
    try {
      await t?.close();
    } finally {
      try {
        await alto?.stop();
      } finally {
        await env.stop();
      }
    }
  };
  try {
    const { entryPoints } = env.chain.info;
    alto = await startAlto({
      rpcUrl: env.chain.rpcUrl,
      executorKey: anvilKeys.bundler,
      utilityKey: anvilKeys.stranger,
      apiVersions: ["v2"],
      entryPoints: options.entryPoints.map((version) =>
        version === "0.6" ? ENTRY_POINT_V06_ADDRESS : entryPoints[version].entryPoint,
      ),
    });
    const chain: ChainConfig = {
      chainId: 31337,
      name: "local",
      rpcUrl: env.chain.rpcUrl,
      bundlerUrl: alto.url,
      ...(options.feeTokens ? { tokens: [...LOCAL_TOKENS] } : {}),
    };
    t = await startTestApp({ signer: env.serviceSigner, chains: new Map([[31337, chain]]) });
    if (options.deposits) await depositForFunding(env, options.deposits.versions, options.deposits.value);
    const base = await t.app.listen({ port: 0, host: "127.0.0.1" });
    return { env, alto, t, endpoint: (dapp) => `${base}/api/v1/31337/${dapp.apiKey}`, stop };
  } catch (error) {
    // Nobody else holds what did start: stop it here, and let the start's own error be the one the test reports.
    await stop().catch(() => undefined);
    throw error;
  }
}

/** The JSON-RPC requests viem's paymaster client sent to our endpoint, in order. */
export type Sent = { method: string; params: unknown[] }[];

/**
 * viem's bundler client on the stack's Alto for `account`, its paymaster viem's ERC-7677 client on `endpoint`; each
 * request that client sends us is pushed to `sent`, when given.
 */
export function bundlerFor(
  stack: Pick<AltoStack, "env" | "alto">,
  endpoint: string,
  account: SmartAccount,
  sent?: Sent,
) {
  const paymaster = createPaymasterClient({
    transport: http(
      endpoint,
      sent && {
        onFetchRequest: async (request) => {
          sent.push((await request.clone().json()) as Sent[number]);
        },
      },
    ),
  });
  return createBundlerClient({
    account,
    client: stack.env.publicClient,
    transport: http(stack.alto.url),
    paymaster,
    pollingInterval: 50,
  });
}
