// Writes contracts/simulations/entryPointSimulationsV0{7,8,9}.json from the eth-infinitism npm packages (development
// dependencies): the runtime code of EntryPointSimulations, which the service's own gas estimate puts at the
// EntryPoint's address for one eth_call (src/gasEstimation/gasEstimationSimulationV07.ts), and the ABI items that call
// needs: simulateHandleOp and every custom error, so that whatever the simulation reverts with can be named. Production
// installs no development package, hence the committed copy; test/chain/entryPointSimulationsArtifacts.test.ts checks
// that it still equals the packages. Run: npx tsx scripts/buildEntryPointSimulations.ts
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import v07 from "@account-abstraction/contracts-v0.7/artifacts/EntryPointSimulations.json" with { type: "json" };
import v07Package from "@account-abstraction/contracts-v0.7/package.json" with { type: "json" };
import v08 from "@account-abstraction/contracts-v0.8/artifacts/EntryPointSimulations.json" with { type: "json" };
import v08Package from "@account-abstraction/contracts-v0.8/package.json" with { type: "json" };
import v09 from "@account-abstraction/contracts-v0.9/artifacts/EntryPointSimulations.json" with { type: "json" };
import v09Package from "@account-abstraction/contracts-v0.9/package.json" with { type: "json" };

const outDir = join(resolve(dirname(fileURLToPath(import.meta.url)), ".."), "contracts", "simulations");

interface NpmArtifact {
  contractName: string;
  abi: readonly { type: string; name?: string }[];
  deployedBytecode: string;
}

const sources: [file: string, npm: { name: string; version: string }, artifact: NpmArtifact][] = [
  ["entryPointSimulationsV07.json", v07Package, v07],
  ["entryPointSimulationsV08.json", v08Package, v08],
  // 0.9.0-rc.1: npm has no 0.9.0; contracts/simulations/README.md says why its simulation code serves the canonical v0.9.0.
  ["entryPointSimulationsV09.json", v09Package, v09],
];

mkdirSync(outDir, { recursive: true });
for (const [file, npm, artifact] of sources) {
  if (artifact.contractName !== "EntryPointSimulations" || !/^0x[0-9a-f]+$/.test(artifact.deployedBytecode)) {
    throw new Error(`${npm.name}@${npm.version}: not the EntryPointSimulations artifact`);
  }
  const abi = artifact.abi.filter(
    (item) => item.type === "error" || (item.type === "function" && item.name === "simulateHandleOp"),
  );
  const out = {
    contractName: artifact.contractName,
    package: `${npm.name}@${npm.version}`,
    abi,
    deployedBytecode: artifact.deployedBytecode,
  };
  writeFileSync(join(outDir, file), `${JSON.stringify(out, null, 2)}\n`);
  console.log(`${file}: ${out.package}, ${(artifact.deployedBytecode.length - 2) / 2} bytes, ${abi.length} ABI items`);
}
