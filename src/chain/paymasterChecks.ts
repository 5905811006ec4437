// What must hold on a chain for the service's signatures to be mined there: the EntryPoint is present, the contract at
// each configured paymaster address is ours and built for that EntryPoint, the service's key is in its signer set, it
// is staked as bundlers require, its deposit can pay (token paymaster), and its fee tokens and price feeds answer.
// The contracts command's `status` prints these; the service's readiness reuses them. Each check says what to do when
// it fails, since the one reading it is an operator.
import { type Address, formatEther, getAddress, isAddressEqual, type PublicClient, parseAbi } from "viem";
import type { KnownEntryPointVersion } from "../bindings/entryPoints/versions";
import { OUR_PAYMASTERS, type OurPaymasterKind, ourPaymaster } from "../bindings/paymasters/ourPaymasters";
import { signerSetAbi } from "../bindings/paymasters/signerSet";
import type { ChainConfig, TokenConfig } from "../config";
import { isOurPaymasterCode } from "./paymasterCode";
import { REQUIRED_UNSTAKE_DELAY_SECONDS, readStake, stakeShortfalls } from "./stakeRequirement";

export type NetworkCheckName =
  | "chainId"
  | "entryPoint"
  | "code"
  | "owner"
  | "signer"
  | "stake"
  | "deposit"
  | "feeToken";

export interface NetworkCheck {
  check: NetworkCheckName;
  /** The EntryPoint version the check is about (none for the chain id). */
  version?: KnownEntryPointVersion;
  /** Which of our paymasters (none for the chain id and the EntryPoint). */
  kind?: OurPaymasterKind;
  /** The contract checked: the EntryPoint, the paymaster or the fee token. */
  address?: Address;
  ok: boolean;
  detail: string;
  /** What to do; present whenever ok is false. */
  fix?: string;
}

/** One EntryPoint version on a chain and our paymasters configured for it. */
export interface EntryPointSite {
  version: KnownEntryPointVersion;
  entryPoint: Address;
  paymasters: Partial<Record<OurPaymasterKind, Address>>;
}

export interface CheckContext {
  /** The address of the service's signing key: it must be in every paymaster's signer set. */
  signer: Address;
  /** When given, each paymaster's owner must be this address. */
  owner?: Address;
  /** The chain's fee tokens (the chains file's `tokens`), checked against the token paymaster. */
  tokens?: readonly TokenConfig[];
  /** How the fixes name the command; "contracts" by default. */
  command?: string;
}

/**
 * Our sites on a chain as its configuration names them: v0.6 from the top-level fields, later versions from
 * `entryPoints`. The service's contract watch (contractWatch.ts) reads them to tell which checks concern a paymaster.
 */
export function sitesOfChain(chain: ChainConfig): EntryPointSite[] {
  const sites: EntryPointSite[] = [];
  const add = (
    version: KnownEntryPointVersion,
    entryPoint: string | undefined,
    configured: Partial<Record<OurPaymasterKind, string>>,
  ) => {
    const paymasters = Object.fromEntries(
      Object.entries(configured).flatMap(([kind, address]) => (address ? [[kind, getAddress(address)]] : [])),
    );
    if (Object.keys(paymasters).length === 0) return;
    sites.push({
      version,
      entryPoint: getAddress(entryPoint ?? OUR_PAYMASTERS[version].canonicalEntryPoint),
      paymasters,
    });
  };
  add("0.6", chain.entryPoint, { verifying: chain.verifyingPaymaster, token: chain.tokenPaymaster });
  for (const [version, contracts] of Object.entries(chain.entryPoints ?? {})) {
    if (contracts === undefined) continue;
    add(version as KnownEntryPointVersion, contracts.entryPoint, {
      verifying: contracts.verifyingPaymaster,
      token: contracts.tokenPaymaster,
      permitToken: contracts.permitTokenPaymaster,
    });
  }
  return sites;
}

/** Every check of a configured chain: its chain id, then each site's. */
export async function checkChain(
  client: PublicClient,
  chain: ChainConfig,
  context: Omit<CheckContext, "tokens">,
): Promise<NetworkCheck[]> {
  const chainId = await client.getChainId();
  const idCheck: NetworkCheck = {
    check: "chainId",
    ok: chainId === chain.chainId,
    detail: `the node answers chain id ${chainId}`,
    ...(chainId === chain.chainId ? {} : { fix: `point rpcUrl of chain ${chain.chainId} at a node of that chain` }),
  };
  if (!idCheck.ok) return [idCheck];
  const sites = await Promise.all(
    sitesOfChain(chain).map((site) => checkSite(client, site, { ...context, tokens: chain.tokens })),
  );
  return [idCheck, ...sites.flat()];
}

/** The checks of one EntryPoint version: the EntryPoint, then each configured paymaster. */
export async function checkSite(
  client: PublicClient,
  site: EntryPointSite,
  context: CheckContext,
): Promise<NetworkCheck[]> {
  const entryPointCode = await client.getCode({ address: site.entryPoint });
  const canonical = OUR_PAYMASTERS[site.version].canonicalEntryPoint;
  const entryPointCheck: NetworkCheck = {
    check: "entryPoint",
    version: site.version,
    address: site.entryPoint,
    ok: hasCode(entryPointCode),
    detail: hasCode(entryPointCode)
      ? `EntryPoint v${site.version} present${isAddressEqual(site.entryPoint, canonical) ? " (canonical address)" : ""}`
      : `no code at the EntryPoint v${site.version} address`,
    ...(hasCode(entryPointCode)
      ? {}
      : {
          fix: `the EntryPoint v${site.version} is deployed at ${canonical} on most chains; if this chain lacks it, leave v${site.version} out of the chains file`,
        }),
  };
  if (!entryPointCheck.ok) return [entryPointCheck];
  const paymasters = await Promise.all(
    (Object.entries(site.paymasters) as [OurPaymasterKind, Address][]).map(([kind, address]) =>
      checkPaymaster(client, site, kind, address, context),
    ),
  );
  return [entryPointCheck, ...paymasters.flat()];
}

async function checkPaymaster(
  client: PublicClient,
  site: EntryPointSite,
  kind: OurPaymasterKind,
  address: Address,
  context: CheckContext,
): Promise<NetworkCheck[]> {
  const command = context.command ?? "contracts";
  const about = { version: site.version, kind, address } as const;
  const artifact = ourPaymaster(site.version, kind);
  if (artifact === undefined) {
    return [
      {
        check: "code",
        ...about,
        ok: false,
        detail: `we have no ${kind} paymaster for EntryPoint v${site.version}`,
        fix: `leave ${kind} out for v${site.version} (it needs EntryPoint v0.7 or later)`,
      },
    ];
  }
  const code = await client.getCode({ address });
  if (!hasCode(code)) {
    return [
      {
        check: "code",
        ...about,
        ok: false,
        detail: `no contract at the ${kind} paymaster address`,
        fix: `deploy it with \`${command} deploy\` and put the address it prints in the chains file`,
      },
    ];
  }
  if (!isOurPaymasterCode(code, artifact, site.entryPoint)) {
    return [
      {
        check: "code",
        ...about,
        ok: false,
        detail: `the code there is not our ${artifact.contractName} built for EntryPoint ${site.entryPoint}`,
        fix: `deploy ours with \`${command} deploy\` and put the address it prints in the chains file (a contract of an older build must be deployed again)`,
      },
    ];
  }
  const [owner, isSigner, stake] = await Promise.all([
    client.readContract({ address, abi: signerSetAbi, functionName: "owner" }),
    client.readContract({ address, abi: signerSetAbi, functionName: "isSigner", args: [context.signer] }),
    readStake(client, site.entryPoint, address),
  ]);
  const checks: NetworkCheck[] = [
    { check: "code", ...about, ok: true, detail: `our ${artifact.contractName}, built for this EntryPoint` },
  ];
  const ownerOk = context.owner === undefined || isAddressEqual(owner, context.owner);
  checks.push({
    check: "owner",
    ...about,
    ok: ownerOk,
    detail: `owned by ${owner}`,
    ...(ownerOk ? {} : { fix: `this paymaster is not ${context.owner}'s: deploy one for that owner` }),
  });
  checks.push({
    check: "signer",
    ...about,
    ok: isSigner,
    detail: isSigner
      ? `the service's key ${context.signer} is in the signer set`
      : `the service's key ${context.signer} is not in the signer set: its signatures fail on chain (AA34)`,
    ...(isSigner
      ? {}
      : { fix: `add it with \`${command} signers add --signer ${context.signer}\` and the owner's --key-file` }),
  });
  const short = stakeShortfalls(stake);
  checks.push({
    check: "stake",
    ...about,
    ok: short.length === 0,
    detail: `stake ${formatEther(stake.stake)}, unstake delay ${stake.unstakeDelaySec} s${short.length > 0 ? `: ${short.join(", ")}` : ""}`,
    ...(short.length === 0
      ? {}
      : {
          fix: `stake it with \`${command} stake --amount 1 --unstake-delay ${REQUIRED_UNSTAKE_DELAY_SECONDS}\` and the owner's --key-file (bundlers refuse an unstaked paymaster that returns a context)`,
        }),
  });
  checks.push(depositCheck(kind, about, stake.deposit, command));
  if (kind !== "verifying") checks.push(...(await feeTokenChecks(client, address, kind, site, context.tokens ?? [])));
  return checks;
}

function depositCheck(
  kind: OurPaymasterKind,
  about: Pick<NetworkCheck, "version" | "kind" | "address">,
  deposit: bigint,
  command: string,
): NetworkCheck {
  const detail = `EntryPoint deposit ${formatEther(deposit)}`;
  // The verifying paymaster's deposit is the dApps' balances: an empty one means no dApp funded it yet, which the
  // sponsorship rules refuse per dApp; it is no fault of the contract.
  if (kind === "verifying") return { check: "deposit", ...about, ok: true, detail: `${detail} (the dApps' balances)` };
  return {
    check: "deposit",
    ...about,
    ok: deposit > 0n,
    detail: `${detail} (pays every ERC20-mode operation's gas)`,
    ...(deposit > 0n ? {} : { fix: `fund it with \`${command} deposit --amount <ETH>\`` }),
  };
}

const feeTokenAbi = parseAbi([
  "function decimals() view returns (uint8)",
  "function oracleRate(address feeToken, address aggregator) view returns (uint256 rate, uint256 updatedAt)",
  "function maxPriceAge() view returns (uint48)",
]);

/** Each fee token answers with the decimals configured, and its price feed (if any) gives the paymaster a fresh rate. */
async function feeTokenChecks(
  client: PublicClient,
  paymaster: Address,
  kind: OurPaymasterKind,
  site: EntryPointSite,
  tokens: readonly TokenConfig[],
): Promise<NetworkCheck[]> {
  if (tokens.length === 0) {
    return [
      {
        check: "feeToken",
        version: site.version,
        kind,
        address: paymaster,
        ok: false,
        detail: "the chains file lists no fee token for this chain",
        fix: "list the chain's fee tokens and their price sources under `tokens` in the chains file",
      },
    ];
  }
  const [maxPriceAge, block] = await Promise.all([
    client.readContract({ address: paymaster, abi: feeTokenAbi, functionName: "maxPriceAge" }),
    client.getBlock(),
  ]);
  return Promise.all(
    tokens.map(async (token): Promise<NetworkCheck> => {
      const about = {
        check: "feeToken",
        version: site.version,
        kind,
        address: getAddress(token.address),
      } as const;
      const problem = await feeTokenProblem(client, paymaster, token, Number(maxPriceAge), block.timestamp);
      if (problem === undefined) {
        return {
          ...about,
          ok: true,
          detail: `${token.symbol}: ${"aggregator" in token.price ? "price feed answers" : "fixed rate"}, ${token.decimals} decimals`,
        };
      }
      return {
        ...about,
        ok: false,
        detail: `${token.symbol}: ${problem.detail}`,
        fix: problem.fix,
      };
    }),
  );
}

async function feeTokenProblem(
  client: PublicClient,
  paymaster: Address,
  token: TokenConfig,
  maxPriceAge: number,
  now: bigint,
): Promise<{ detail: string; fix: string } | undefined> {
  const address = getAddress(token.address);
  let decimals: number;
  try {
    decimals = await client.readContract({ address, abi: feeTokenAbi, functionName: "decimals" });
  } catch {
    return { detail: "no ERC20 token answers decimals() there", fix: "correct the token's address in the chains file" };
  }
  if (decimals !== token.decimals) {
    return {
      detail: `the token has ${decimals} decimals, the chains file says ${token.decimals}`,
      fix: "correct `decimals` in the chains file",
    };
  }
  if (!("aggregator" in token.price)) return undefined;
  try {
    const [, updatedAt] = await client.readContract({
      address: paymaster,
      abi: feeTokenAbi,
      functionName: "oracleRate",
      args: [address, getAddress(token.price.aggregator)],
    });
    if (now - updatedAt > BigInt(maxPriceAge)) {
      return {
        detail: `the price feed's last answer is ${now - updatedAt} s old, more than the paymaster's maxPriceAge (${maxPriceAge} s)`,
        fix: "use a feed that updates within maxPriceAge, or have the owner raise it with setMaxPriceAge",
      };
    }
  } catch (error) {
    return {
      detail: `the paymaster cannot read a price from the feed ${token.price.aggregator}: ${shortReason(error)}`,
      fix: "correct the aggregator address in the chains file (a Chainlink-style AggregatorV3Interface)",
    };
  }
  return undefined;
}

function shortReason(error: unknown): string {
  const message = (error as { shortMessage?: string; message?: string }).shortMessage ?? String(error);
  return message.split("\n")[0] ?? message;
}

function hasCode(code: string | undefined): code is `0x${string}` {
  return code !== undefined && code !== "0x";
}
