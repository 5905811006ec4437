// The SPONSORED-mode contracts from contracts/artifacts: VerifyingPaymaster (EntryPoint v0.6) and VerifyingPaymasterV07
// (v0.7 and v0.8, one deployment per EntryPoint). Apart from artifacts.ts, which also loads the npm EntryPoint v0.6
// artifacts, so that the production contracts command can load ours without the development packages.
import { verifyingPaymasterAbi } from "../../../contracts/artifacts/VerifyingPaymaster.abi";
import verifyingPaymasterJson from "../../../contracts/artifacts/VerifyingPaymaster.json" with { type: "json" };
import { verifyingPaymasterV07Abi } from "../../../contracts/artifacts/VerifyingPaymasterV07.abi";
import verifyingPaymasterV07Json from "../../../contracts/artifacts/VerifyingPaymasterV07.json" with { type: "json" };
import { verifyingPaymasterV09Abi } from "../../../contracts/artifacts/VerifyingPaymasterV09.abi";
import verifyingPaymasterV09Json from "../../../contracts/artifacts/VerifyingPaymasterV09.json" with { type: "json" };
import { loadOwnArtifact } from "./ownArtifact";

export const verifyingPaymasterArtifact = loadOwnArtifact(
  verifyingPaymasterJson,
  "VerifyingPaymaster",
  verifyingPaymasterAbi,
);

/** Our verifying paymaster for EntryPoint v0.7 and v0.8 (one deployment per EntryPoint). */
export const verifyingPaymasterV07Artifact = loadOwnArtifact(
  verifyingPaymasterV07Json,
  "VerifyingPaymasterV07",
  verifyingPaymasterV07Abi,
);

/** Our verifying paymaster for EntryPoint v0.9: a signer set, and the paymaster signature apart (parallel signing). */
export const verifyingPaymasterV09Artifact = loadOwnArtifact(
  verifyingPaymasterV09Json,
  "VerifyingPaymasterV09",
  verifyingPaymasterV09Abi,
);
