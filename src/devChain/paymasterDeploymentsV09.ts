// Our paymasters for EntryPoint v0.9 on a local chain. VerifyingPaymasterV09 keeps a signer set (contracts/SignerSet.sol)
// and takes no signer in its constructor: (EntryPoint, owner) alone, so its address does not depend on the service's
// key, which the local chain's start adds afterwards (signerSetAdditions.ts). The token paymaster for v0.9 is, for now,
// TokenPaymasterV07 built against the v0.9 EntryPoint: its in-data signature over its own hash works there unchanged
// (sequential signing), the way a v0.8 paymaster does.
import { concat, encodeAbiParameters } from "viem";
import { ENTRY_POINT_V09_ADDRESS } from "../sponsorship/entryPoints/entryPointV09";
import { verifyingPaymasterV09Artifact } from "../sponsorship/paymasters/artifacts";
import { tokenPaymasterV07Artifact } from "../sponsorship/paymasters/tokenArtifacts";
import { ANVIL_FIRST_ACCOUNT, type Create2Deployment, create2, paymasterDeployment } from "./deployments";

/** VerifyingPaymasterV09 for the canonical v0.9 EntryPoint, anvil's first account as owner. */
export const localVerifyingPaymasterV09Deployment: Create2Deployment = create2(
  "VerifyingPaymasterV09",
  concat([
    verifyingPaymasterV09Artifact.bytecode,
    encodeAbiParameters([{ type: "address" }, { type: "address" }], [ENTRY_POINT_V09_ADDRESS, ANVIL_FIRST_ACCOUNT]),
  ]),
);

/** TokenPaymasterV07 for the v0.9 EntryPoint, with the owner and first signer of the v0.7/v0.8 ones. */
export const localTokenPaymasterV09Deployment: Create2Deployment = paymasterDeployment(
  `TokenPaymasterV07 for EntryPoint ${ENTRY_POINT_V09_ADDRESS}`,
  tokenPaymasterV07Artifact.bytecode,
  { entryPoint: ENTRY_POINT_V09_ADDRESS, owner: ANVIL_FIRST_ACCOUNT, verifyingSigner: ANVIL_FIRST_ACCOUNT },
);
