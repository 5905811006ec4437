// The service in front of a real local chain: anvil with the EntryPoint and our paymaster deployed, the service's key as
// the paymaster's verifying signer, the chain's RPC in the service's configuration, and a clock the test can move.
import type { Address, Hex } from "viem";
import { parseEther } from "viem";
import { generatePrivateKey, type LocalAccount, privateKeyToAccount } from "viem/accounts";
import type { UserOperation } from "../../src/bindings/entryPoints/userOperation";
import type { ChainConfig } from "../../src/config";
import type { AppContext } from "../../src/context";
import { anvilKeys, depositOn, newAccountOperation, type Sponsored, startSponsoredChain } from "../contracts/fixtures";
import type { Dapp, TestApp } from "./app";
import { startTestApp } from "./app";
import { fundedDapp, rpc } from "./dappSetup";
import { sentUserOpV06 } from "./userOps";

export const INFINITISM = { name: "INFINITISM", version: "1.0.0" };
/** What the test operations call: a plain address, whitelisted with an ABI of no functions (a call without data). */
export const TARGET: Address = "0x1111111111111111111111111111111111111111";

export interface ChainApp {
  env: Sponsored;
  t: TestApp;
  /** Moves the service's clock (ms) forward. */
  advance(ms: number): void;
  close(): Promise<void>;
}

/** A started chain and a service on it; `chain` overrides the service's chain entry (rpcUrl, verifyingPaymaster). */
export async function startChainApp(
  options: { chain?: Partial<ChainConfig>; ctx?: Partial<AppContext> } = {},
): Promise<ChainApp> {
  const env = await startSponsoredChain();
  let offsetMs = 0;
  try {
    const chains = new Map<number, ChainConfig>([
      [31337, { chainId: 31337, name: "local", rpcUrl: env.anvil.rpcUrl, ...options.chain }],
    ]);
    const t = await startTestApp({
      signer: env.serviceSigner,
      chains,
      now: () => Date.now() + offsetMs,
      ...options.ctx,
    });
    return {
      env,
      t,
      advance: (ms) => {
        offsetMs += ms;
      },
      async close() {
        try {
          await t.close();
        } finally {
          await env.anvil.stop();
        }
      },
    };
  } catch (error) {
    await env.anvil.stop();
    throw error;
  }
}

/** A dApp whose funding wallet is `fundingKey` (an anvil account with ether), deploying accounts and calling TARGET. */
export async function chainDapp(t: TestApp, fundingKey: Hex = anvilKeys.fundingWallet): Promise<Dapp> {
  return fundedDapp(t, { fundingKey, walletDeployment: true, contract: { address: TARGET } });
}

/** Puts `value` into the funding wallet's balance in our paymaster. */
export const deposit = (app: ChainApp, value: bigint, fundingKey?: Hex) => depositOn(app.env, value, fundingKey);

export const ONE_ETHER = parseEther("1");

/** A fresh account's first operation (deploy + a call to TARGET), not yet sponsored. */
export async function freshOperation(app: ChainApp): Promise<{ op: UserOperation; owner: LocalAccount }> {
  return newAccountOperation(app.env, { to: TARGET, value: 0n }, privateKeyToAccount(generatePrivateKey()));
}

/** The sponsorship endpoint's answer for `op` (hex numbers, as wallets send them). */
export async function requestSponsorship(
  t: TestApp,
  dapp: Dapp,
  op: UserOperation,
  mode: Record<string, unknown> = {},
): Promise<{ paymasterAndData: Hex; reason?: string; callGasLimit: number; verificationGasLimit: number }> {
  const reply = await rpc(t, dapp, "pm_sponsorUserOperation", [
    sentUserOpV06(op),
    { mode: "SPONSORED", calculateGasLimits: false, sponsorshipInfo: { smartAccountInfo: INFINITISM }, ...mode },
  ]);
  if (reply.status !== 200 || !reply.body.result) throw new Error(`sponsorship failed: ${JSON.stringify(reply.body)}`);
  return reply.body.result;
}
