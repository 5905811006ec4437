// What makes one of our paymasters on a chain safe to sign for, read from the chain: our code at the configured
// address, built for the configured EntryPoint, the service's key in its signer set, and the stake bundlers require.
// A sponsorship that fails one of these would be signed and then refused by the bundler (AA30-AA34) or mined by none;
// checked here, the service refuses it first with the check named (src/chain/contractWatch.ts runs these
// periodically). The `contracts status` command reports more (owner, deposit, tokens); these are what signing needs.
import { type Address, type Hex, hexToBytes, isAddressEqual, type PublicClient, parseAbi, parseEther } from "viem";
import type { KnownEntryPointVersion } from "../sponsorship/entryPoints/versions";
import {
  type Artifact,
  verifyingPaymasterArtifact,
  verifyingPaymasterV07Artifact,
  verifyingPaymasterV09Artifact,
} from "../sponsorship/paymasters/artifacts";
import { signerSetAbi } from "../sponsorship/paymasters/signerSet";
import { tokenPaymasterArtifact, tokenPaymasterV07Artifact } from "../sponsorship/paymasters/tokenArtifacts";
import type { PaymasterKind, SponsoringChain } from "./sponsoringChains";

/**
 * The stake every one of our paymasters must hold at its EntryPoint. ERC-7562 lets only a staked paymaster return a
 * context from validation, and each of ours does (postOp charges the dApp's deposit or the sender's tokens), so a
 * bundler that applies the rules drops our operations from an unstaked one. 1 native token and a one-day unstake delay
 * are the minimums Alto, Rundler and Skandha apply by default.
 */
export const REQUIRED_STAKE = { amount: parseEther("1"), unstakeDelaySec: 86_400 } as const;

/** The compiled contract of each of our paymasters, by EntryPoint version and kind. */
const ARTIFACTS: Record<KnownEntryPointVersion, Record<PaymasterKind, Artifact>> = {
  "0.6": { verifying: verifyingPaymasterArtifact, token: tokenPaymasterArtifact },
  "0.7": { verifying: verifyingPaymasterV07Artifact, token: tokenPaymasterV07Artifact },
  "0.8": { verifying: verifyingPaymasterV07Artifact, token: tokenPaymasterV07Artifact },
  "0.9": { verifying: verifyingPaymasterV09Artifact, token: tokenPaymasterV07Artifact },
};

/** One of our paymasters as the chains file places it. */
export interface ConfiguredContract {
  version: KnownEntryPointVersion;
  kind: PaymasterKind;
  entryPoint: Address;
  address: Address;
}

export type CheckName = "code" | "entryPoint" | "signer" | "stake";

/** One check of one contract: what was found, and when it failed, what the operator does about it. */
export interface CheckLine {
  check: CheckName;
  ok: boolean;
  detail: string;
  fix?: string;
}

/** Every paymaster the chains file names on `chain`, each with its EntryPoint: v0.6's fields, then `entryPoints`. */
export function configuredContracts(chain: SponsoringChain): ConfiguredContract[] {
  const versions: Array<
    [KnownEntryPointVersion, { entryPoint: Address; verifyingPaymaster?: Address; tokenPaymaster?: Address }]
  > = [["0.6", chain], ...chain.entryPoints];
  const contracts: ConfiguredContract[] = [];
  for (const [version, served] of versions) {
    const { entryPoint } = served;
    if (served.verifyingPaymaster)
      contracts.push({ version, kind: "verifying", entryPoint, address: served.verifyingPaymaster });
    if (served.tokenPaymaster) contracts.push({ version, kind: "token", entryPoint, address: served.tokenPaymaster });
  }
  return contracts;
}

const basePaymasterAbi = parseAbi(["function entryPoint() view returns (address)"]);
const stakeManagerAbi = parseAbi([
  "struct DepositInfo { uint256 deposit; bool staked; uint112 stake; uint32 unstakeDelaySec; uint48 withdrawTime; }",
  "function getDepositInfo(address account) view returns (DepositInfo info)",
]);

/**
 * The checks of one contract, in the order a failure explains the next: no code makes every other read meaningless, so
 * it is the only line then. A read the node fails to answer throws (the caller keeps its last verdict).
 */
export async function checkContract(
  client: PublicClient,
  contract: ConfiguredContract,
  serviceSigner: Address,
): Promise<CheckLine[]> {
  const { address, entryPoint, version, kind } = contract;
  const name = `our ${kind} paymaster for EntryPoint v${version}`;
  const deploy = `deploy it with \`contracts deploy --entry-points ${version} --kinds ${kind}\` and put the address it prints in the chains file`;
  const code = await client.getCode({ address });
  if (!code || code === "0x") {
    return [{ check: "code", ok: false, detail: `no contract at ${address}`, fix: deploy }];
  }
  if (!sameCode(ARTIFACTS[version][kind].deployedBytecode, code)) {
    return [{ check: "code", ok: false, detail: `the code at ${address} is not ${name}`, fix: deploy }];
  }
  const [builtFor, isSigner, stake] = await Promise.all([
    client.readContract({ address, abi: basePaymasterAbi, functionName: "entryPoint" }),
    client.readContract({ address, abi: signerSetAbi, functionName: "isSigner", args: [serviceSigner] }),
    client.readContract({ address: entryPoint, abi: stakeManagerAbi, functionName: "getDepositInfo", args: [address] }),
  ]);
  return [
    { check: "code", ok: true, detail: `${name} at ${address}` },
    isAddressEqual(builtFor, entryPoint)
      ? { check: "entryPoint", ok: true, detail: `built for EntryPoint ${entryPoint}` }
      : {
          check: "entryPoint",
          ok: false,
          detail: `built for EntryPoint ${builtFor}, not the configured ${entryPoint}`,
          fix: `correct the chains file's EntryPoint v${version} or its paymaster address`,
        },
    isSigner
      ? { check: "signer", ok: true, detail: `the service's key ${serviceSigner} is in the signer set` }
      : {
          check: "signer",
          ok: false,
          detail: `the service's key ${serviceSigner} is not in the paymaster's signer set`,
          fix: `add it with \`contracts signers add --signer ${serviceSigner} --entry-points ${version}\` (the owner's key)`,
        },
    stakeLine(stake, version),
  ];
}

function stakeLine(info: { staked: boolean; stake: bigint; unstakeDelaySec: number }, version: string): CheckLine {
  const required = `${REQUIRED_STAKE.amount} wei with an unstake delay of ${REQUIRED_STAKE.unstakeDelaySec} s`;
  const fix = `stake it with \`contracts stake --amount 1 --unstake-delay ${REQUIRED_STAKE.unstakeDelaySec} --entry-points ${version}\``;
  if (!info.staked) {
    const why = info.stake > 0n ? "its stake is unlocked" : "it is not staked";
    return { check: "stake", ok: false, detail: `${why}; bundlers require ${required}`, fix };
  }
  if (info.stake < REQUIRED_STAKE.amount || info.unstakeDelaySec < REQUIRED_STAKE.unstakeDelaySec) {
    return {
      check: "stake",
      ok: false,
      detail: `staked ${info.stake} wei with an unstake delay of ${info.unstakeDelaySec} s; bundlers require ${required}`,
      fix,
    };
  }
  return { check: "stake", ok: true, detail: `staked ${info.stake} wei, unstake delay ${info.unstakeDelaySec} s` };
}

/**
 * Whether code read from a chain is the artifact's runtime code. The compiler leaves each immutable (the EntryPoint)
 * as zero bytes in the artifact, filled in at deployment, so a byte may differ only where the artifact has a zero.
 */
function sameCode(artifact: Hex, onChain: Hex): boolean {
  const expected = hexToBytes(artifact);
  const found = hexToBytes(onChain);
  if (expected.length !== found.length) return false;
  for (let i = 0; i < expected.length; i += 1) {
    if (expected[i] !== 0 && expected[i] !== found[i]) return false;
  }
  return true;
}
