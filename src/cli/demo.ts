// `npm run demo`: the whole sponsored flow against the running service and its local chain, each step printed, then a
// token-paid operation in ERC20 mode (demoErc20.ts), then sponsored operations on EntryPoint v0.7 and, with EIP-7702,
// on v0.8 (demoV07.ts), then an EIP-7702 operation on v0.8 paid in TUSDC with a permit, no approve (demoPermit.ts). It finds both through the data folder (DATA_DIR, ./data by default): the service's address in
// owner.lock, the local chain's in local-chain.json. Each run makes a new account, dApp and smart accounts; the funding
// wallet is anvil's account #2 every time, so its deposit in the v0.6 paymaster grows by 1 ETH a run (0.1 ETH in each
// later version's) less what the operations cost.
import {
  type Address,
  createPublicClient,
  createWalletClient,
  defineChain,
  encodeFunctionData,
  formatEther,
  type Hex,
  http,
  parseEther,
  parseEventLogs,
  size,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { MANAGEMENT_PREFIX } from "../app";
import { entryPointAbi } from "../bindings/entryPoints/entryPoint";
import { simpleAccountFactoryArtifact, verifyingPaymasterArtifact } from "../bindings/paymasters/artifacts";
import { ConfigError, loadConfig } from "../config";
import { ANVIL_DEFAULT_KEYS, type LocalChainInfo, readLocalChainInfo } from "../devChain/localChain";
import { simpleAccountAbi } from "../devChain/simpleAccount";
import { ADMIN_SECRET_HEADER } from "../http/admin";
import { folderOwner, readAdminSecret } from "../storage/dataFolder";
import { runTokenPaidDemo } from "./demoErc20";
import { newSimpleAccount, ownerSigned, type SponsoredGas, sendHandleOps } from "./demoOperationV06";
import { runPermitDemo } from "./demoPermit";
import { type LaterEntryPointDemoContext, runLaterEntryPointDemo } from "./demoV07";

const DEPOSIT = parseEther("1");
const WILDCARD_HOSTS = new Set(["0.0.0.0", "::", ""]);
/** The account the SDKs name: it tells the service how to read callData (docs/sponsorship-rpc.md). */
const SMART_ACCOUNT_INFO = { name: "INFINITISM", version: "1.0.0" };
const REQUEST_TIMEOUT_MS = 30_000;

/** Something the demo cannot go on without; its message says what to do. */
class DemoError extends Error {}

interface Service {
  baseUrl: string;
  adminSecret: string;
}

/** The running service of the data folder and its local chain, or a DemoError saying which one is missing. */
function findService(): { service: Service; chain: LocalChainInfo } {
  const config = loadConfig();
  if (config.databaseUrl) {
    throw new DemoError(
      "npm run demo works with the embedded default: unset DATABASE_URL (with PostgreSQL the service runs no local chain " +
        "unless LOCAL_CHAIN=auto, and the demo cannot find it)",
    );
  }
  const owner = folderOwner(config.dataDir);
  const secret = readAdminSecret(config.dataDir);
  if (owner?.role !== "service" || owner.port === undefined || owner.host === undefined || !secret) {
    throw new DemoError(`no service is running on the data folder ${config.dataDir}: start it with npm start first`);
  }
  const chain = readLocalChainInfo(config.dataDir);
  if (!chain || chain.servicePid !== owner.pid) {
    throw new DemoError(
      `the service (process ${owner.pid}) runs without a local chain: it starts one only with LOCAL_CHAIN=auto (the ` +
        "default without DATABASE_URL) and chain 31337 listed without an rpcUrl in the chains file",
    );
  }
  const host = WILDCARD_HOSTS.has(owner.host) ? "127.0.0.1" : owner.host.includes(":") ? `[${owner.host}]` : owner.host;
  return { service: { baseUrl: `http://${host}:${owner.port}`, adminSecret: secret }, chain };
}

async function request<T>(url: string, init: RequestInit, what: string): Promise<T> {
  let response: Response;
  try {
    response = await fetch(url, { ...init, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  } catch (error) {
    throw new DemoError(`${what}: the service at ${new URL(url).origin} does not answer (${(error as Error).message})`);
  }
  const body = (await response.json()) as T & { message?: string };
  if (!response.ok) throw new DemoError(`${what}: HTTP ${response.status} ${JSON.stringify(body)}`);
  return body;
}

function step(n: number, text: string): void {
  console.log(`${n}. ${text}`);
}

function detail(text: string): void {
  console.log(`   ${text}`);
}

const eth = (wei: bigint) => `${formatEther(wei)} ETH`;

async function main(): Promise<void> {
  const started = performance.now();
  const { service, chain: local } = findService();
  const chain = defineChain({
    id: local.chainId,
    name: "Local development chain (anvil)",
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [local.rpcUrl] } },
  });
  const transport = http(local.rpcUrl, { timeout: REQUEST_TIMEOUT_MS });
  const publicClient = createPublicClient({ chain, transport, pollingInterval: 50 });
  const wallet = (key: Hex) =>
    createWalletClient({ account: privateKeyToAccount(key), chain, transport, pollingInterval: 50 });
  const fundingWallet = wallet(ANVIL_DEFAULT_KEYS.fundingWallet);
  const bundler = wallet(ANVIL_DEFAULT_KEYS.bundler);
  const paymaster = { address: local.verifyingPaymaster, abi: verifyingPaymasterArtifact.abi } as const;
  const factory = local.simpleAccountFactory;
  const deposit = () =>
    publicClient.readContract({ ...paymaster, functionName: "getBalance", args: [fundingWallet.account.address] });

  console.log(`Paymaster demo: service ${service.baseUrl}, local chain ${local.rpcUrl} (chain ${local.chainId})`);

  const account = await request<{ data: { id: string; authToken: string } }>(
    `${service.baseUrl}/internal/accounts`,
    {
      method: "POST",
      headers: { "content-type": "application/json", [ADMIN_SECRET_HEADER]: service.adminSecret },
      body: JSON.stringify({ name: `demo ${new Date().toISOString()}` }),
    },
    "creating the account",
  );
  const token = account.data.authToken;
  step(1, `Account created through the running service (id ${account.data.id}); its authToken is ${token}`);

  const management = async <T>(method: string, route: string, apiKey: string | undefined, body?: unknown) => {
    const headers: Record<string, string> = { authToken: token };
    if (apiKey) headers.apiKey = apiKey;
    if (body !== undefined) headers["content-type"] = "application/json";
    const reply = await request<{ data: T }>(
      `${service.baseUrl}${MANAGEMENT_PREFIX}/${route}`,
      { method, headers, body: body === undefined ? undefined : JSON.stringify(body) },
      `${method} ${route}`,
    );
    return reply.data;
  };

  const dapp = await management<{ apiKey: string; paymasterId: string }>("POST", "paymasterParameters", undefined, {
    name: "demo-dapp",
    type: "HYBRID",
    chainId: local.chainId,
    version: "1.0.0",
  });
  step(
    2,
    `Paymaster "demo-dapp" created on chain ${local.chainId}: paymasterId ${dapp.paymasterId}, apiKey ${dapp.apiKey}`,
  );

  const { fundingMessage } = await management<{ fundingMessage: string }>(
    "GET",
    `funding-message/${dapp.paymasterId}`,
    dapp.apiKey,
  );
  const signature = await fundingWallet.account.signMessage({ message: fundingMessage });
  await management("PATCH", "paymasterParameters", dapp.apiKey, {
    paymasterId: dapp.paymasterId,
    type: "paymasterFundingId",
    signature,
    address: fundingWallet.account.address,
  });
  step(3, `Funding wallet ${fundingWallet.account.address} (anvil account #2) linked with its EIP-191 signature of:`);
  for (const line of fundingMessage.split("\n")) detail(`| ${line}`);

  const beforeDeposit = await deposit();
  const depositHash = await fundingWallet.writeContract({
    ...paymaster,
    functionName: "depositFor",
    args: [fundingWallet.account.address],
    value: DEPOSIT,
  });
  const depositReceipt = await publicClient.waitForTransactionReceipt({ hash: depositHash });
  if (depositReceipt.status !== "success") throw new DemoError(`depositFor reverted: ${depositHash}`);
  const depositBefore = await deposit();
  step(4, `depositFor: ${eth(DEPOSIT)} from the funding wallet into the paymaster ${paymaster.address}`);
  detail(`tx ${depositHash}; the funding wallet's deposit: ${eth(beforeDeposit)} -> ${eth(depositBefore)}`);

  await management("POST", "smart-contract", dapp.apiKey, {
    name: "SimpleAccountFactory",
    address: factory,
    abi: JSON.stringify(simpleAccountFactoryArtifact.abi),
    whitelistedMethods: ["createAccount"],
  });
  step(5, `Whitelisted SimpleAccountFactory ${factory}, method createAccount only`);

  await management("POST", "paymaster-policy", dapp.apiKey, {
    name: "deployments",
    policyType: "WALLET_DEPLOYMENT",
    policyData: {},
  });
  step(6, "WALLET_DEPLOYMENT policy added: operations that deploy their account are sponsored");

  // A new smart account: its first operation deploys it and calls the whitelisted method (demoOperationV06.ts).
  const smartAccount = await newSimpleAccount(publicClient, factory);
  const { sender, created } = smartAccount;
  const callData = encodeFunctionData({
    abi: simpleAccountAbi,
    functionName: "execute",
    args: [factory, 0n, smartAccount.createOther],
  });
  const sponsored = await sponsor(service.baseUrl, local.chainId, dapp.apiKey, {
    sender,
    nonce: "0x0",
    initCode: smartAccount.initCode,
    callData,
    paymasterAndData: "0x",
    signature: "0x",
  });
  step(7, "pm_sponsorUserOperation over HTTP, without gas fields (calculateGasLimits: true): sponsored");
  detail(`smart account ${sender} (owner ${smartAccount.owner.address}), not deployed yet`);
  detail(
    `callGasLimit ${sponsored.callGasLimit}, verificationGasLimit ${sponsored.verificationGasLimit}, ` +
      `preVerificationGas ${sponsored.preVerificationGas}, maxFeePerGas ${sponsored.maxFeePerGas}, ` +
      `maxPriorityFeePerGas ${sponsored.maxPriorityFeePerGas}`,
  );
  detail(`paymasterAndData (${size(sponsored.paymasterAndData)} bytes) ${sponsored.paymasterAndData}`);

  const { op, userOpHash } = await ownerSigned(publicClient, smartAccount, callData, sponsored);
  step(8, `Signed by the smart account's owner: userOpHash ${userOpHash}`);

  const { hash, receipt } = await sendHandleOps(publicClient, bundler, op);
  step(9, `handleOps sent by ${bundler.account.address} (anvil account #1, as a bundler)`);
  detail(`transaction ${hash}: ${receipt.status} in block ${receipt.blockNumber}, gas used ${receipt.gasUsed}`);
  if (receipt.status !== "success") throw new DemoError(`handleOps reverted: ${hash}`);
  const [event] = parseEventLogs({ abi: entryPointAbi, eventName: "UserOperationEvent", logs: receipt.logs });
  if (!event) throw new DemoError(`no UserOperationEvent in ${hash}`);
  const depositAfter = await deposit();
  const deployed = async (address: Address) => ((await publicClient.getCode({ address })) ?? "0x") !== "0x";
  detail(
    `UserOperationEvent success: ${event.args.success}, paymaster ${event.args.paymaster}, actualGasCost ` +
      `${eth(event.args.actualGasCost)}, actualGasUsed ${event.args.actualGasUsed}`,
  );
  detail(`smart account ${sender} deployed: ${await deployed(sender)}`);
  detail(
    `account created by the sponsored call (owner ${smartAccount.otherOwner}) ${created} deployed: ${await deployed(created)}`,
  );
  detail(
    `deposit of the funding wallet: before the operation ${eth(depositBefore)}, after ${eth(depositAfter)} ` +
      `(down ${eth(depositBefore - depositAfter)})`,
  );
  if (!event.args.success)
    throw new DemoError("the operation ran but its call reverted (UserOperationEvent success false)");
  const next = await runTokenPaidDemo({
    baseUrl: service.baseUrl,
    chainId: local.chainId,
    apiKey: dapp.apiKey,
    factory,
    publicClient,
    bundler,
    firstStep: 10,
    step,
    detail,
  }).catch((error: Error) => {
    throw new DemoError(error.message);
  });
  const later: LaterEntryPointDemoContext = {
    baseUrl: service.baseUrl,
    chainId: local.chainId,
    apiKey: dapp.apiKey,
    stacks: local.entryPoints,
    publicClient,
    bundler,
    fundingWallet,
    whitelist: async (name, address, methods) => {
      await management("POST", "smart-contract", dapp.apiKey, {
        name,
        address,
        abi: JSON.stringify(simpleAccountFactoryArtifact.abi),
        whitelistedMethods: methods,
      });
    },
    firstStep: next,
    step,
    detail,
  };
  const afterLater = await runLaterEntryPointDemo(later).catch((error: Error) => {
    throw new DemoError(error.message);
  });
  await runPermitDemo(later, afterLater).catch((error: Error) => {
    throw new DemoError(error.message);
  });
  console.log(
    `Done in ${((performance.now() - started) / 1000).toFixed(1)} s: on EntryPoint v0.6 a sponsored and a token-paid ` +
      "operation, on v0.7 a sponsored one, on v0.8 and v0.9 a sponsored EIP-7702 one each, and on v0.8 one paid in " +
      "TUSDC with a permit and no approve, mined on the local chain.",
  );
}

type SponsorResult = SponsoredGas & { reason?: string };

/** The wallet's side of the JSON-RPC endpoint: the service estimates the gas, chooses the fees and signs. */
async function sponsor(
  baseUrl: string,
  chainId: number,
  apiKey: string,
  userOp: Record<string, string>,
): Promise<SponsorResult> {
  const reply = await fetch(`${baseUrl}/api/v1/${chainId}/${apiKey}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "pm_sponsorUserOperation",
      params: [
        userOp,
        { mode: "SPONSORED", calculateGasLimits: true, sponsorshipInfo: { smartAccountInfo: SMART_ACCOUNT_INFO } },
      ],
    }),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const body = (await reply.json()) as { result?: SponsorResult; error?: { code: number; message: string } };
  if (!body.result) throw new DemoError(`pm_sponsorUserOperation failed: ${JSON.stringify(body.error ?? body)}`);
  if (body.result.reason || size(body.result.paymasterAndData) === 0) {
    throw new DemoError(`pm_sponsorUserOperation did not sponsor: ${body.result.reason ?? "no reason given"}`);
  }
  if (body.result.maxFeePerGas === undefined) throw new DemoError("pm_sponsorUserOperation chose no fees");
  return body.result;
}

main().catch((error) => {
  const known = error instanceof DemoError || error instanceof ConfigError;
  console.error(known ? `Demo stopped: ${error.message}` : `Demo failed: ${(error as Error).stack ?? error}`);
  process.exit(1);
});
