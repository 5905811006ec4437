import type { Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { Dapp, TestApp } from "./app";

/** Links a fresh funding wallet to the dApp through the real three-step flow; returns the wallet's address. */
export async function linkFundingWallet(t: TestApp, dapp: Dapp, privateKey: Hex = generatePrivateKey()): Promise<Hex> {
  const wallet = privateKeyToAccount(privateKey);
  const auth = { token: dapp.token, apiKey: dapp.apiKey };
  const message = await t.call("GET", `funding-message/${dapp.paymasterId}`, auth);
  const fundingMessage = (message.body.data as { fundingMessage: string }).fundingMessage;
  const signature = await wallet.signMessage({ message: fundingMessage });
  const linked = await t.call("PATCH", "paymasterParameters", {
    ...auth,
    body: { paymasterId: dapp.paymasterId, type: "paymasterFundingId", signature, address: wallet.address },
  });
  if (linked.status !== 200) throw new Error(`funding link failed: ${JSON.stringify(linked.body)}`);
  return wallet.address.toLowerCase() as Hex;
}

export interface FundedDappSetup {
  /** The funding wallet's private key: an anvil account with ether for tests on a chain; a fresh key by default. */
  fundingKey?: Hex;
  /** Adds the WALLET_DEPLOYMENT policy, so that operations deploying an account pass that rule. */
  walletDeployment?: boolean;
  /** One contract to whitelist: no ABI and no methods by default, which allows calls without data. */
  contract?: { address: string; abi?: readonly unknown[]; methods?: string[] };
  /** What `t.dapp` takes (a name, another chain). */
  dapp?: Parameters<TestApp["dapp"]>[0];
}

/**
 * A dApp whose funding wallet is linked through the real flow (the first thing sponsorship asks for), with the
 * deployment policy and one whitelisted contract when asked; returns it with the funding wallet's address.
 */
export async function fundedDapp(t: TestApp, setup: FundedDappSetup = {}): Promise<Dapp & { fundingAddress: Hex }> {
  const dapp = await t.dapp(setup.dapp);
  const fundingAddress = await linkFundingWallet(t, dapp, setup.fundingKey);
  if (setup.walletDeployment) await addPolicy(t, dapp, "WALLET_DEPLOYMENT", {});
  if (setup.contract) {
    const { address, abi = [], methods = [] } = setup.contract;
    await whitelist(t, dapp, address, abi, methods);
  }
  return { ...dapp, fundingAddress };
}

export async function whitelist(t: TestApp, dapp: Dapp, address: string, abi: readonly unknown[], methods?: string[]) {
  const reply = await t.call("POST", "smart-contract", {
    token: dapp.token,
    apiKey: dapp.apiKey,
    body: { name: `contract-${address.slice(2, 10)}`, address, abi: JSON.stringify(abi), whitelistedMethods: methods },
  });
  if (reply.status !== 200) throw new Error(`whitelist failed: ${JSON.stringify(reply.body)}`);
}

export async function addPolicy(t: TestApp, dapp: Dapp, policyType: string, policyData: unknown, name = policyType) {
  const reply = await t.call("POST", "paymaster-policy", {
    token: dapp.token,
    apiKey: dapp.apiKey,
    body: { name, policyType, policyData },
  });
  if (reply.status !== 200) throw new Error(`policy failed: ${JSON.stringify(reply.body)}`);
  return (reply.body.data as { _id: string })._id;
}

/** Calls the sponsorship endpoint through `app.inject`. */
export async function rpc(
  t: TestApp,
  dapp: Pick<Dapp, "apiKey" | "chainId">,
  method: string,
  params: unknown,
  options: { id?: unknown; path?: string; raw?: string; contentType?: string } = {},
) {
  const response = await t.app.inject({
    method: "POST",
    url: options.path ?? `/api/v1/${dapp.chainId}/${dapp.apiKey}`,
    headers: { "content-type": options.contentType ?? "application/json" },
    payload: options.raw ?? JSON.stringify({ jsonrpc: "2.0", id: options.id ?? 1, method, params }),
  });
  return { status: response.statusCode, headers: response.headers, body: response.json() };
}
