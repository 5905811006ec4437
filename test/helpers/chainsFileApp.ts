// A service configured as an operator configures one: its chain's entry written to a chains file and read by the
// service's own reader, so every default the file leaves out (the L1 data fee's model by chain id, say) applies.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Hex } from "viem";
import { readChains } from "../../src/config";
import { createSigner } from "../../src/signer/signer";
import { anvilKeys } from "../contracts/fixtures";
import { type Dapp, startTestApp, type TestApp } from "./app";
import { TARGET } from "./chainApp";
import { fundedDapp } from "./dappSetup";

const folder = mkdtempSync(path.join(tmpdir(), "paymaster-chains-file-"));
let written = 0;

/** The service with `entry` as its one chain, signing with `serviceKey`. */
export async function appFromChainsEntry(entry: Record<string, unknown>, serviceKey: Hex): Promise<TestApp> {
  const file = path.join(folder, `chains-${++written}.json`);
  writeFileSync(file, JSON.stringify([entry]));
  return startTestApp({ signer: createSigner(serviceKey), chains: readChains(file) });
}

/** A dApp on `chainId` that sponsors calls to TARGET, account deployments included, from the local funding wallet. */
export async function sponsoringDapp(t: TestApp, chainId: number): Promise<Dapp> {
  return fundedDapp(t, {
    dapp: { chainId },
    fundingKey: anvilKeys.fundingWallet,
    walletDeployment: true,
    contract: { address: TARGET },
  });
}
