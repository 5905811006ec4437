import { type Address, isAddress, isAddressEqual } from "viem";
import { ENTRY_POINT_VERSIONS, type KnownEntryPointVersion } from "../bindings/entryPoints/versions";
import {
  type ChainConfig,
  type L1DataFeeConfig,
  LATER_ENTRY_POINT_VERSIONS,
  type LaterEntryPointVersion,
  type TokenConfig,
} from "../config";
import { type AccountCodeSource, AccountCodes } from "./accountCode";
import { type ChainHeadSource, ChainHeads } from "./chainHead";
import {
  LOCAL_ENTRY_POINT_STACKS,
  LOCAL_TOKEN_PAYMASTER_ADDRESS,
  LOCAL_VERIFYING_PAYMASTER_ADDRESS,
} from "./localAddresses";
import { type NativeUsdPriceSource, nativeUsdPriceSource } from "./nativeUsdPrice";

/** Our contracts for one EntryPoint version after v0.6 on one chain. */
export interface ServedEntryPoint {
  entryPoint: Address;
  /** Undefined where none is deployed: SPONSORED mode is then refused for this EntryPoint with a reason. */
  verifyingPaymaster?: Address;
  /** Set when the chain has fee tokens and names one; none means ERC20 mode is refused for this EntryPoint. */
  tokenPaymaster?: Address;
  /**
   * The token paymaster that charges before the call (PermitTokenPaymasterV07), kept like tokenPaymaster only beside
   * fee tokens; none means ERC20 mode is served here by the approve-in-batch token paymaster alone.
   */
  permitTokenPaymaster?: Address;
}

/** A supported chain with the contract addresses a sponsorship signs for. */
export interface SponsoringChain {
  chainId: number;
  name: string;
  /** EntryPoint v0.6 (this field and the two paymasters below are v0.6's). */
  entryPoint: Address;
  /** Undefined where no verifying paymaster is deployed: requests are then refused with a reason. */
  verifyingPaymaster?: Address;
  /** A node's JSON-RPC; without it the chain signs but cannot estimate gas, check deposits or settle. */
  rpcUrl?: string;
  bundlerUrl?: string;
  /** ERC20 mode: the token paymaster, set when the chain has fee tokens; none means ERC20 mode is refused. */
  tokenPaymaster?: Address;
  tokens?: readonly TokenConfig[];
  /** The later EntryPoint versions served on this chain; a version not in it is refused with a reason. */
  entryPoints: ReadonlyMap<LaterEntryPointVersion, ServedEntryPoint>;
  /** The native token's dollar price, for USD rules; none: every USD rule of this chain refuses. */
  nativeUsdPrice?: NativeUsdPriceSource;
  /** The code at an address, read through `rpcUrl` (set with it): whether a sender is deployed already. */
  accountCode?: AccountCodeSource;
  /** The head block and the chain's pace, read through `rpcUrl` (set with it): where a window in blocks starts. */
  heads?: ChainHeadSource;
  /** How the chain charges for L1 data, which preVerificationGas must repay the bundler; absent: no L1 fee. */
  l1DataFee?: L1DataFeeConfig;
}

export const LOCAL_CHAIN_ID = 31337;

/**
 * Fills each configured chain's defaults: the canonical EntryPoints, and on the local development chain the
 * deterministic addresses where the project deploys its paymasters, so that signing works on a fresh start.
 */
export function sponsoringChains(chains: ReadonlyMap<number, ChainConfig>): ReadonlyMap<number, SponsoringChain> {
  const resolved = new Map<number, SponsoringChain>();
  for (const chain of chains.values()) {
    const local = chain.chainId === LOCAL_CHAIN_ID;
    const verifyingPaymaster =
      (chain.verifyingPaymaster as Address | undefined) ?? (local ? LOCAL_VERIFYING_PAYMASTER_ADDRESS : undefined);
    const tokens = chain.tokens ?? [];
    const tokenPaymaster =
      tokens.length === 0
        ? undefined
        : ((chain.tokenPaymaster as Address | undefined) ?? (local ? LOCAL_TOKEN_PAYMASTER_ADDRESS : undefined));
    resolved.set(chain.chainId, {
      chainId: chain.chainId,
      name: chain.name,
      entryPoint: (chain.entryPoint as Address | undefined) ?? ENTRY_POINT_VERSIONS["0.6"].canonicalAddress,
      ...(verifyingPaymaster ? { verifyingPaymaster } : {}),
      ...(chain.rpcUrl
        ? {
            rpcUrl: chain.rpcUrl,
            accountCode: new AccountCodes({ rpcUrl: chain.rpcUrl }),
            heads: new ChainHeads({ rpcUrl: chain.rpcUrl }),
          }
        : {}),
      ...(chain.bundlerUrl ? { bundlerUrl: chain.bundlerUrl } : {}),
      ...(tokenPaymaster ? { tokenPaymaster, tokens } : {}),
      entryPoints: laterEntryPoints(chain, tokens.length > 0),
      ...(chain.nativeUsdPrice ? { nativeUsdPrice: nativeUsdPriceSource(chain.nativeUsdPrice, chain) } : {}),
      ...(chain.l1DataFee ? { l1DataFee: chain.l1DataFee } : {}),
    });
  }
  return resolved;
}

/**
 * The versions the chains file lists for the chain, or on the local chain every version. A local default paymaster
 * (verifying, and token when the chain has fee tokens, as for v0.6) is taken only for the canonical EntryPoint: it was
 * built against that one and would refuse any other.
 */
function laterEntryPoints(
  chain: ChainConfig,
  hasTokens: boolean,
): ReadonlyMap<LaterEntryPointVersion, ServedEntryPoint> {
  const local = chain.chainId === LOCAL_CHAIN_ID;
  const served = new Map<LaterEntryPointVersion, ServedEntryPoint>();
  for (const version of LATER_ENTRY_POINT_VERSIONS) {
    const listed = chain.entryPoints?.[version];
    if (!listed && !local) continue;
    const entryPoint = (listed?.entryPoint as Address | undefined) ?? ENTRY_POINT_VERSIONS[version].canonicalAddress;
    const localStack =
      local && isAddressEqual(entryPoint, ENTRY_POINT_VERSIONS[version].canonicalAddress)
        ? LOCAL_ENTRY_POINT_STACKS[version]
        : undefined;
    const verifyingPaymaster = (listed?.verifyingPaymaster as Address | undefined) ?? localStack?.verifyingPaymaster;
    const tokenPaymaster = hasTokens
      ? ((listed?.tokenPaymaster as Address | undefined) ?? localStack?.tokenPaymaster)
      : undefined;
    const permitTokenPaymaster = hasTokens
      ? ((listed?.permitTokenPaymaster as Address | undefined) ?? localStack?.permitTokenPaymaster)
      : undefined;
    served.set(version, {
      entryPoint,
      ...(verifyingPaymaster ? { verifyingPaymaster } : {}),
      ...(tokenPaymaster ? { tokenPaymaster } : {}),
      ...(permitTokenPaymaster ? { permitTokenPaymaster } : {}),
    });
  }
  return served;
}

/** Which of our paymasters a request needs: SPONSORED mode signs with the verifying one, ERC20 mode with the token one. */
export type PaymasterKind = "verifying" | "token";

export type EntryPointAnswer =
  | { served: true; version: KnownEntryPointVersion; entryPoint: Address; paymaster: Address }
  | { served: false; reason: string };

/**
 * Which EntryPoint version a request's EntryPoint address is on `chain`, and our paymaster of `kind` for it; or why the
 * chain does not serve it, naming the EntryPoint, the chain and what is missing.
 */
export function paymasterForEntryPoint(
  chain: SponsoringChain,
  entryPoint: string,
  kind: PaymasterKind,
): EntryPointAnswer {
  if (!isAddress(entryPoint, { strict: false })) {
    return { served: false, reason: `EntryPoint ${JSON.stringify(entryPoint)} is not a 20-byte hex address` };
  }
  const refuse = (why: string): EntryPointAnswer => ({
    served: false,
    reason: `EntryPoint ${entryPoint} is not served on chain ${chain.chainId}: ${why}`,
  });
  const found = servedVersion(chain, entryPoint);
  if (!found) {
    const version = LATER_ENTRY_POINT_VERSIONS.find((later) =>
      isAddressEqual(entryPoint, ENTRY_POINT_VERSIONS[later].canonicalAddress),
    );
    if (!version) return refuse(`it serves ${servedList(chain)}`);
    const elsewhere = chain.entryPoints.get(version)?.entryPoint;
    return refuse(
      elsewhere
        ? `the chains file gives EntryPoint v${version} there as ${elsewhere}`
        : `the chains file lists no EntryPoint v${version} for it (entryPoints["${version}"])`,
    );
  }
  const paymaster = kind === "verifying" ? found.served.verifyingPaymaster : found.served.tokenPaymaster;
  if (paymaster) return { served: true, version: found.version, entryPoint: found.served.entryPoint, paymaster };
  // Token paymasters are kept only beside fee tokens, so on a chain without tokens those are what is missing first.
  if (kind === "token" && !chain.tokens?.length)
    return refuse("the chains file lists no fee tokens for it (ERC20 mode)");
  return refuse(`the chains file names no ${kind} paymaster for EntryPoint v${found.version}`);
}

function servedVersion(
  chain: SponsoringChain,
  entryPoint: Address,
): { version: KnownEntryPointVersion; served: ServedEntryPoint } | undefined {
  if (isAddressEqual(entryPoint, chain.entryPoint)) {
    return {
      version: "0.6",
      served: {
        entryPoint: chain.entryPoint,
        ...(chain.verifyingPaymaster ? { verifyingPaymaster: chain.verifyingPaymaster } : {}),
        ...(chain.tokenPaymaster ? { tokenPaymaster: chain.tokenPaymaster } : {}),
      },
    };
  }
  for (const [version, served] of chain.entryPoints) {
    if (isAddressEqual(entryPoint, served.entryPoint)) return { version, served };
  }
  return undefined;
}

function servedList(chain: SponsoringChain): string {
  const versions = [`${chain.entryPoint} (v0.6)`];
  for (const [version, served] of chain.entryPoints) versions.push(`${served.entryPoint} (v${version})`);
  return versions.join(", ");
}
