// Which of our contracts serves which EntryPoint version and paymaster kind, and the canonical EntryPoint each is built
// against. The contracts command deploys from this table and the network checks compare chain code with it, so a new
// EntryPoint version or kind is one more line here (and its artifact).
import { type Address, concat, encodeAbiParameters, type Hex } from "viem";
import { ENTRY_POINT_V06_ADDRESS } from "../entryPoints/entryPoint";
import { ENTRY_POINT_V07_ADDRESS, ENTRY_POINT_V08_ADDRESS } from "../entryPoints/entryPointV07";
import { ENTRY_POINT_V09_ADDRESS } from "../entryPoints/entryPointV09";
import type { KnownEntryPointVersion } from "../entryPoints/versions";
import type { Artifact } from "./artifacts";
import { permitTokenPaymasterV07Artifact, tokenPaymasterArtifact, tokenPaymasterV07Artifact } from "./tokenArtifacts";
import {
  verifyingPaymasterArtifact,
  verifyingPaymasterV07Artifact,
  verifyingPaymasterV09Artifact,
} from "./verifyingArtifacts";

/**
 * SPONSORED mode (a dApp's deposit pays), ERC20 mode charged after the call (token: the sender approves, postOp pulls)
 * or before it (permitToken: validation takes the maximum, with a permit when the allowance is short; postOp refunds).
 */
export type OurPaymasterKind = "verifying" | "token" | "permitToken";
export const OUR_PAYMASTER_KINDS: readonly OurPaymasterKind[] = ["verifying", "token", "permitToken"];

interface VersionContracts {
  canonicalEntryPoint: Address;
  /** The up-front token paymaster reads v0.7's packed operation: none for v0.6. */
  paymasters: Record<Exclude<OurPaymasterKind, "permitToken">, Artifact> & { permitToken?: Artifact };
}

/** v0.8 changed the user operation hash, not what a paymaster reads: v0.7's contracts serve both. */
const V07_PAYMASTERS: VersionContracts["paymasters"] = {
  verifying: verifyingPaymasterV07Artifact,
  token: tokenPaymasterV07Artifact,
  permitToken: permitTokenPaymasterV07Artifact,
};

export const OUR_PAYMASTERS: Record<KnownEntryPointVersion, VersionContracts> = {
  "0.6": {
    canonicalEntryPoint: ENTRY_POINT_V06_ADDRESS,
    paymasters: { verifying: verifyingPaymasterArtifact, token: tokenPaymasterArtifact },
  },
  "0.7": { canonicalEntryPoint: ENTRY_POINT_V07_ADDRESS, paymasters: V07_PAYMASTERS },
  "0.8": { canonicalEntryPoint: ENTRY_POINT_V08_ADDRESS, paymasters: V07_PAYMASTERS },
  // VerifyingPaymasterV09 reads v0.9's paymaster signature suffix (parallel signing); TokenPaymasterV07 signs
  // sequentially there, unchanged; PermitTokenPaymasterV07 reads the suffix as well as a signature in its data.
  "0.9": {
    canonicalEntryPoint: ENTRY_POINT_V09_ADDRESS,
    paymasters: { ...V07_PAYMASTERS, verifying: verifyingPaymasterV09Artifact },
  },
};

export const OUR_ENTRY_POINT_VERSIONS = Object.keys(OUR_PAYMASTERS) as readonly KnownEntryPointVersion[];

/** Our contract of `kind` for `version`; undefined where the kind has none (the up-front token paymaster on v0.6). */
export function ourPaymaster(version: KnownEntryPointVersion, kind: OurPaymasterKind): Artifact | undefined {
  return OUR_PAYMASTERS[version].paymasters[kind];
}

/**
 * Creation code with the constructor arguments every paymaster of ours takes: (EntryPoint, owner). No signer: the
 * address then does not depend on the service's key, which the owner adds to the signer set afterwards.
 */
export function paymasterInitCode(artifact: Artifact, entryPoint: Address, owner: Address): Hex {
  return concat([
    artifact.bytecode,
    encodeAbiParameters([{ type: "address" }, { type: "address" }], [entryPoint, owner]),
  ]);
}
