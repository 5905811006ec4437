// Safe 1.4.1 as a 4337 account (what permissionless's toSafeSmartAccount({ version: "1.4.1" }) builds on EntryPoint
// v0.7, its default): the Safe singleton, its proxy factory and MultiSend contracts, deployed through Safe's singleton
// factory, and the Safe4337Module 0.3.0 with the SafeModuleSetup that enables it, through the CREATE2 proxy. The
// creation code is the npm packages' own (@safe-global/safe-contracts@1.4.1, @safe-global/safe-4337@0.3.0).
import safeData from "../../contracts/accounts/safe.json" with { type: "json" };
import { type AccountFamily, loadAccountDeploymentData } from "./accountDeploymentData";

export const safeAccountFamily: AccountFamily = {
  name: "Safe 1.4.1 with Safe4337Module 0.3.0",
  entryPointVersion: "0.7",
  data: loadAccountDeploymentData(safeData, "contracts/accounts/safe.json"),
};
