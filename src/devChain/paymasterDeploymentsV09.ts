// Our paymasters for EntryPoint v0.9 on a local chain, both with (EntryPoint, owner) like every paymaster of ours (the
// service's key goes into their signer sets after deployment). VerifyingPaymasterV09 reads the v0.9 paymaster
// signature suffix (parallel signing) as well as a signature inside paymasterData. The token paymaster for v0.9 is
// TokenPaymasterV07 built against the v0.9 EntryPoint: its in-data signature over its own hash works there unchanged
// (sequential signing), the way a v0.8 paymaster does.
import { ENTRY_POINT_V09_ADDRESS } from "../bindings/entryPoints/entryPointV09";
import { verifyingPaymasterV09Artifact } from "../bindings/paymasters/artifacts";
import { permitTokenPaymasterV07Artifact, tokenPaymasterV07Artifact } from "../bindings/paymasters/tokenArtifacts";
import { ANVIL_FIRST_ACCOUNT, type Create2Deployment, paymasterDeployment } from "./deployments";

const args = { entryPoint: ENTRY_POINT_V09_ADDRESS, owner: ANVIL_FIRST_ACCOUNT };

/** VerifyingPaymasterV09 for the canonical v0.9 EntryPoint, anvil's first account as owner. */
export const localVerifyingPaymasterV09Deployment: Create2Deployment = paymasterDeployment(
  "VerifyingPaymasterV09",
  verifyingPaymasterV09Artifact,
  args,
);

/** TokenPaymasterV07 for the v0.9 EntryPoint, with the owner of the v0.7/v0.8 ones. */
export const localTokenPaymasterV09Deployment: Create2Deployment = paymasterDeployment(
  `TokenPaymasterV07 for EntryPoint ${ENTRY_POINT_V09_ADDRESS}`,
  tokenPaymasterV07Artifact,
  args,
);

/** PermitTokenPaymasterV07 for the v0.9 EntryPoint: it reads v0.9's paymaster signature suffix (parallel signing). */
export const localPermitTokenPaymasterV09Deployment: Create2Deployment = paymasterDeployment(
  `PermitTokenPaymasterV07 for EntryPoint ${ENTRY_POINT_V09_ADDRESS}`,
  permitTokenPaymasterV07Artifact,
  args,
);
