// Biconomy Nexus 1.0 with its K1 (ECDSA) validator (what permissionless's toNexusSmartAccount({ version: "1.0.0" })
// builds on EntryPoint v0.7): the implementation, the bootstrapper, the K1 validator and the K1ValidatorFactory,
// deployed through Biconomy's CREATE3 factory, and the bootstrap library through the CREATE2 proxy. The salts and code
// are those permissionless's own test chain deploys. A CREATE3 address proves the salt but not the code (see
// accountDeploymentData.ts): that these bytes are Biconomy's rests on that source.
import nexusData from "../../contracts/accounts/nexus.json" with { type: "json" };
import { type AccountFamily, loadAccountDeploymentData } from "./accountDeploymentData";

export const nexusAccountFamily: AccountFamily = {
  name: "Nexus 1.0 with K1Validator",
  entryPointVersion: "0.7",
  data: loadAccountDeploymentData(nexusData, "contracts/accounts/nexus.json"),
};
