// The committed EntryPointSimulations code (contracts/simulations/, scripts/buildEntryPointSimulations.ts) is the npm
// packages' own: the runtime code byte for byte, each ABI item as the package has it, and the hand-written ABI the
// estimate calls with present in every version.
import assert from "node:assert/strict";
import { test } from "node:test";
import v07 from "@account-abstraction/contracts-v0.7/artifacts/EntryPointSimulations.json" with { type: "json" };
import v08 from "@account-abstraction/contracts-v0.8/artifacts/EntryPointSimulations.json" with { type: "json" };
import v09 from "@account-abstraction/contracts-v0.9/artifacts/EntryPointSimulations.json" with { type: "json" };
import type { Abi, AbiParameter } from "viem";
import committedV07 from "../../contracts/simulations/entryPointSimulationsV07.json" with { type: "json" };
import committedV08 from "../../contracts/simulations/entryPointSimulationsV08.json" with { type: "json" };
import committedV09 from "../../contracts/simulations/entryPointSimulationsV09.json" with { type: "json" };
import { ENTRY_POINT_SIMULATIONS, simulateHandleOpAbi } from "../../src/gasEstimation/entryPointSimulations";

function typeOf(parameter: AbiParameter): string {
  if (!parameter.type.startsWith("tuple")) return parameter.type;
  const components = "components" in parameter ? parameter.components : [];
  return `(${components.map(typeOf).join(",")})${parameter.type.slice("tuple".length)}`;
}

/** What changes how an item is called or decoded; parameter names do not. */
function describe(item: Abi[number]): string {
  if (item.type === "function") {
    return `function ${item.name}(${item.inputs.map(typeOf)}) ${item.stateMutability} returns (${item.outputs.map(typeOf)})`;
  }
  if (item.type === "error") return `error ${item.name}(${item.inputs.map(typeOf)})`;
  return item.type;
}

const versions = [
  ["0.7", v07, committedV07, "@account-abstraction/contracts@0.7.0"],
  ["0.8", v08, committedV08, "@account-abstraction/contracts@0.8.0"],
  ["0.9", v09, committedV09, "@account-abstraction/contracts@0.9.0-rc.1"],
] as const;

for (const [version, npm, committed, source] of versions) {
  test(`v${version}: the committed simulation code and ABI are ${source}'s EntryPointSimulations`, () => {
    assert.equal(committed.package, source);
    assert.equal(committed.contractName, "EntryPointSimulations");
    assert.equal(committed.deployedBytecode, npm.deployedBytecode);
    assert.equal(ENTRY_POINT_SIMULATIONS[version].code, npm.deployedBytecode);
    const inPackage = new Set((npm.abi as Abi).map(describe));
    const kept = (committed.abi as Abi).map(describe);
    for (const item of kept) assert.ok(inPackage.has(item), `${item} is the package's`);
    // Every error is kept, so that any revert of the simulation can be named.
    const errors = (npm.abi as Abi).filter((item) => item.type === "error").map(describe);
    assert.deepEqual(kept.filter((item) => item.startsWith("error ")).sort(), [...errors].sort());
    for (const item of simulateHandleOpAbi) assert.ok(kept.includes(describe(item)), `${describe(item)} kept`);
  });
}
