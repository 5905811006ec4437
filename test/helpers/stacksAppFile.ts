// The one service a test file sponsors through on the local chain with every EntryPoint's stack (chain 31337, no
// bundler: the service estimates through the node), signing with the stacks' service key; started before the file's
// tests with the funding wallet's deposits the file names, and closed after them, the app before the chain. The RPC
// files that sponsor on real contracts without Alto each started and stopped these the same way.
//
//   let dapp: Dapp;
//   const { env, t } = stacksAppFile({ deposits: ["0.8", "0.9"] }, async ({ t }) => {
//     dapp = await chainDapp(t);
//   });
import assert from "node:assert/strict";
import { after, before } from "node:test";
import { parseEther } from "viem";
import type { LaterEntryPointVersion } from "../../src/config";
import { depositForFunding, type LocalStacks, startLocalStacks } from "../contracts/v07/localStacks";
import { startTestApp, type TestApp } from "./app";

export interface StacksAppOptions {
  /** One ether into the funding wallet's balance in our verifying paymaster of each version named. */
  deposits?: readonly ("0.6" | LaterEntryPointVersion)[];
}

export interface StacksAppFile {
  env(): LocalStacks;
  t(): TestApp;
}

export function stacksAppFile(
  options: StacksAppOptions,
  prepare?: (started: { env: LocalStacks; t: TestApp }) => Promise<void>,
): StacksAppFile {
  let env: LocalStacks | undefined;
  let t: TestApp | undefined;
  before(async () => {
    env = await startLocalStacks();
    const chain = { chainId: 31337, name: "local", rpcUrl: env.chain.rpcUrl };
    t = await startTestApp({ signer: env.serviceSigner, chains: new Map([[31337, chain]]) });
    if (options.deposits) await depositForFunding(env, options.deposits, parseEther("1"));
    await prepare?.({ env, t });
  });
  after(async () => {
    try {
      await t?.close();
    } finally {
      await env?.stop();
    }
  });
  return {
    env: () => {
      assert.ok(env, "the local chain did not start");
      return env;
    },
    t: () => {
      assert.ok(t, "the service did not start");
      return t;
    },
  };
}
