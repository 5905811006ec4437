// ERC20 mode on a local chain (anvil): the TokenPaymaster, two test fee tokens (TUSD, a plain ERC20, and TUSDC, which
// has USDC's permit) and a fixed-price aggregator that prices both, each at its
// deterministic CREATE2 address (computed from the committed artifacts alone, like deployments.ts), deployed by
// deployLocalTokenStack. Every step skips what is already done, so a restarted service or a second test can call it
// again.
import {
  type Address,
  concat,
  encodeAbiParameters,
  getContractAddress,
  type Hex,
  isAddressEqual,
  parseEther,
} from "viem";
import { ENTRY_POINT_V06_ADDRESS } from "../bindings/entryPoints/entryPoint";
import {
  fixedPriceAggregatorArtifact,
  permitTestTokenArtifact,
  testTokenArtifact,
  tokenPaymasterArtifact,
} from "../bindings/paymasters/tokenArtifacts";
import {
  ANVIL_FIRST_ACCOUNT,
  CREATE2_DEPLOYER_ADDRESS,
  CREATE2_SALT,
  type Create2Deployment,
  entryPointDeployment,
  type PaymasterArgs,
  paymasterDeployment,
} from "./deployments";
import { confirm, deployCreate2Batch } from "./localBatch";
import { addSignerIfNeeded, type ChainClients, checkEntryPointArtifact, type DeployOutcome } from "./localDeployment";

function create2(name: string, initCode: Hex): Create2Deployment {
  return {
    name,
    initCode,
    address: getContractAddress({
      opcode: "CREATE2",
      from: CREATE2_DEPLOYER_ADDRESS,
      salt: CREATE2_SALT,
      bytecode: initCode,
    }),
  };
}

function tokenPaymasterDeployment(args: PaymasterArgs): Create2Deployment {
  return paymasterDeployment("TokenPaymaster", tokenPaymasterArtifact, args);
}

/** The token paymaster on a local chain: canonical EntryPoint, anvil's first account as owner. */
const localTokenPaymasterDeployment = tokenPaymasterDeployment({
  entryPoint: ENTRY_POINT_V06_ADDRESS,
  owner: ANVIL_FIRST_ACCOUNT,
});

/** The local fee token: six decimals like USDC, so the demo shows a token whose unit is not 1e18. */
export const LOCAL_TEST_TOKEN = { name: "Test USD", symbol: "TUSD", decimals: 6 } as const;

const localTestTokenDeployment = create2(
  "TestToken",
  concat([
    testTokenArtifact.bytecode,
    encodeAbiParameters(
      [{ type: "string" }, { type: "string" }, { type: "uint8" }],
      [LOCAL_TEST_TOKEN.name, LOCAL_TEST_TOKEN.symbol, LOCAL_TEST_TOKEN.decimals],
    ),
  ]),
);

/**
 * The local USDC-like fee token (PermitTestToken): USDC's EIP-712 domain shape (a name, version "2"), 6 decimals, a
 * permit that runs in validation (the maximum deadline skips the clock) and accepts ERC-1271 signatures.
 */
export const LOCAL_PERMIT_TOKEN = { name: "Test USD Coin", symbol: "TUSDC", version: "2", decimals: 6 } as const;

const localPermitTokenDeployment = create2(
  "PermitTestToken",
  concat([
    permitTestTokenArtifact.bytecode,
    encodeAbiParameters(
      [{ type: "string" }, { type: "string" }, { type: "string" }],
      [LOCAL_PERMIT_TOKEN.name, LOCAL_PERMIT_TOKEN.symbol, LOCAL_PERMIT_TOKEN.version],
    ),
  ]),
);

/** The local price: 1 ETH = 3,000 TUSD (and TUSDC, also a dollar), with Chainlink's eight decimals for fiat pairs. */
export const LOCAL_PRICE = { description: "ETH / TUSD", decimals: 8, answer: 3_000n * 10n ** 8n } as const;

const localPriceAggregatorDeployment = create2(
  "FixedPriceAggregator",
  concat([
    fixedPriceAggregatorArtifact.bytecode,
    encodeAbiParameters(
      [{ type: "address" }, { type: "uint8" }, { type: "string" }, { type: "int256" }],
      [ANVIL_FIRST_ACCOUNT, LOCAL_PRICE.decimals, LOCAL_PRICE.description, LOCAL_PRICE.answer],
    ),
  ]),
);

/** These move whenever the contracts' bytecode changes (not their comments: the build embeds no metadata hash). */
export const LOCAL_TOKEN_PAYMASTER_ADDRESS: Address = localTokenPaymasterDeployment.address;
export const LOCAL_TEST_TOKEN_ADDRESS: Address = localTestTokenDeployment.address;
export const LOCAL_PERMIT_TOKEN_ADDRESS: Address = localPermitTokenDeployment.address;
export const LOCAL_PRICE_AGGREGATOR_ADDRESS: Address = localPriceAggregatorDeployment.address;

/** What the local token paymaster's EntryPoint deposit is topped up to: it pays every token-paid operation's gas. */
export const LOCAL_TOKEN_PAYMASTER_DEPOSIT = parseEther("10");

export interface LocalTokenStack {
  entryPoint: DeployOutcome;
  tokenPaymaster: DeployOutcome;
  testToken: DeployOutcome;
  permitToken: DeployOutcome;
  priceAggregator: DeployOutcome;
  /** Wei added to the token paymaster's EntryPoint deposit (0 when it already held LOCAL_TOKEN_PAYMASTER_DEPOSIT). */
  depositAdded: bigint;
  /** True when the aggregator's answer was re-dated because it was getting stale. */
  priceRefreshed: boolean;
}

/**
 * Deploys the EntryPoint if missing, then the token paymaster, the two test tokens and the aggregator; tops the paymaster's
 * deposit up to LOCAL_TOKEN_PAYMASTER_DEPOSIT and re-dates a stale local price. The wallet client must be anvil's first
 * account, the owner of the paymaster and the aggregator. The paymaster is not staked: local bundlers run unsafe.
 */
export async function deployLocalTokenStack(clients: ChainClients): Promise<LocalTokenStack> {
  checkEntryPointArtifact();
  // Sent together, the EntryPoint first: the paymaster is built against its address.
  const { entryPoint, tokenPaymaster, testToken, permitToken, priceAggregator } = await deployCreate2Batch(clients, {
    entryPoint: entryPointDeployment,
    tokenPaymaster: localTokenPaymasterDeployment,
    testToken: localTestTokenDeployment,
    permitToken: localPermitTokenDeployment,
    priceAggregator: localPriceAggregatorDeployment,
  });
  const depositAdded = await topUpTokenPaymasterDeposit(clients, LOCAL_TOKEN_PAYMASTER_DEPOSIT);
  const { refreshed } = await refreshLocalPrice(clients);
  return {
    entryPoint,
    tokenPaymaster,
    testToken,
    permitToken,
    priceAggregator,
    depositAdded,
    priceRefreshed: refreshed,
  };
}

async function requireOwner(clients: ChainClients, contract: Address, owner: Address, what: string): Promise<void> {
  if (!isAddressEqual(owner, clients.walletClient.account.address)) {
    throw new Error(`only the owner ${owner} of ${contract} can ${what}, not ${clients.walletClient.account.address}`);
  }
}

/** Deposits the difference when the paymaster's EntryPoint deposit is below `minimum`; returns the wei added. */
async function topUpTokenPaymasterDeposit(
  clients: ChainClients,
  minimum: bigint,
  paymaster: Address = LOCAL_TOKEN_PAYMASTER_ADDRESS,
): Promise<bigint> {
  const contract = { address: paymaster, abi: tokenPaymasterArtifact.abi } as const;
  const current = await clients.publicClient.readContract({ ...contract, functionName: "getDeposit" });
  if (current >= minimum) return 0n;
  const missing = minimum - current;
  const { walletClient } = clients;
  const hash = await walletClient.writeContract({
    ...contract,
    functionName: "deposit",
    value: missing,
    account: walletClient.account,
    chain: walletClient.chain,
  });
  await confirm(clients.publicClient, hash, "funding the token paymaster's EntryPoint deposit");
  return missing;
}

/**
 * Re-dates the local aggregator's answer (same price) once half of the paymaster's maxPriceAge has passed, so a
 * long-running local chain keeps accepting oracle-priced operations. Nothing is sent while the price is fresh.
 */
export async function refreshLocalPrice(
  clients: ChainClients,
  aggregator: Address = LOCAL_PRICE_AGGREGATOR_ADDRESS,
  paymaster: Address = LOCAL_TOKEN_PAYMASTER_ADDRESS,
): Promise<{ refreshed: boolean; transactionHash?: Hex }> {
  const { publicClient, walletClient } = clients;
  const feed = { address: aggregator, abi: fixedPriceAggregatorArtifact.abi } as const;
  const [, answer, , updatedAt] = await publicClient.readContract({ ...feed, functionName: "latestRoundData" });
  const maxPriceAge = await publicClient.readContract({
    address: paymaster,
    abi: tokenPaymasterArtifact.abi,
    functionName: "maxPriceAge",
  });
  const { timestamp } = await publicClient.getBlock();
  if (answer > 0n && updatedAt + BigInt(maxPriceAge) / 2n > timestamp) return { refreshed: false };
  await requireOwner(
    clients,
    aggregator,
    await publicClient.readContract({ ...feed, functionName: "owner" }),
    "refresh its price",
  );
  const hash = await walletClient.writeContract({
    ...feed,
    functionName: "setAnswer",
    args: [answer > 0n ? answer : LOCAL_PRICE.answer],
    account: walletClient.account,
    chain: walletClient.chain,
  });
  await confirm(clients.publicClient, hash, "refreshing the local price");
  return { refreshed: true, transactionHash: hash };
}

/**
 * Adds `signer` (the service's own key) to the token paymaster's signer set; nothing is sent when it is there already.
 * The wallet client must be the owner, which on a local chain is anvil's first account.
 */
export async function addTokenPaymasterSigner(
  clients: ChainClients,
  signer: Address,
  paymaster: Address = LOCAL_TOKEN_PAYMASTER_ADDRESS,
): Promise<{ changed: boolean; transactionHash?: Hex }> {
  return addSignerIfNeeded(clients, paymaster, signer);
}

/** Mints local test tokens (TUSD, or TUSDC by its address) to `to` (anyone may mint them: local chains only). */
export async function mintTestTokens(
  clients: ChainClients,
  to: Address,
  amount: bigint,
  token: Address = LOCAL_TEST_TOKEN_ADDRESS,
): Promise<Hex> {
  const { walletClient } = clients;
  const hash = await walletClient.writeContract({
    address: token,
    abi: testTokenArtifact.abi,
    functionName: "mint",
    args: [to, amount],
    account: walletClient.account,
    chain: walletClient.chain,
  });
  await confirm(clients.publicClient, hash, "minting test tokens");
  return hash;
}
