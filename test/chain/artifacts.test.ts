import assert from "node:assert/strict";
import { test } from "node:test";
import type { Abi, AbiParameter } from "viem";
import { entryPointAbi } from "../../src/bindings/entryPoints/entryPoint";
import { entryPointV07Abi } from "../../src/bindings/entryPoints/entryPointV07";
import {
  entryPointArtifact,
  loadArtifact,
  simpleAccountArtifact,
  simpleAccountFactoryArtifact,
  verifyingPaymasterArtifact,
} from "../../src/bindings/paymasters/artifacts";
import { simpleAccountAbi, simpleAccountFactoryAbi } from "../../src/devChain/simpleAccount";

function typeOf(parameter: AbiParameter): string {
  if (!parameter.type.startsWith("tuple")) return parameter.type;
  const components = "components" in parameter ? parameter.components : [];
  return `(${components.map(typeOf).join(",")})${parameter.type.slice("tuple".length)}`;
}

/** Everything about an ABI item that changes how it is called or decoded; parameter names do not. */
function describe(item: Abi[number]): string {
  switch (item.type) {
    case "function":
      return `function ${item.name}(${item.inputs.map(typeOf)}) ${item.stateMutability} returns (${item.outputs.map(typeOf)})`;
    case "event":
      return `event ${item.name}(${item.inputs.map((input) => `${typeOf(input)}${input.indexed ? " indexed" : ""}`)})`;
    case "error":
      return `error ${item.name}(${item.inputs.map(typeOf)})`;
    default:
      return item.type;
  }
}

const subsets = [
  ["EntryPoint", entryPointAbi, entryPointArtifact.abi],
  ["SimpleAccount", simpleAccountAbi, simpleAccountArtifact.abi],
  ["SimpleAccountFactory", simpleAccountFactoryAbi, simpleAccountFactoryArtifact.abi],
  // v0.7 and v0.8 share the hand-written PackedUserOperation ABI, and their SimpleAccounts the v0.6 calls the tests
  // make; executeBatch is not among them (0.7 added a values array, 0.8 takes Call structs).
  ...(["0.7", "0.8"] as const).flatMap((version) => {
    const npm = (name: string) => loadArtifact(`@account-abstraction/contracts-v${version}/artifacts/${name}.json`).abi;
    return [
      [`EntryPoint v${version}`, entryPointV07Abi, npm("EntryPoint")],
      [
        `SimpleAccount v${version}`,
        simpleAccountAbi.filter((item) => item.name !== "executeBatch"),
        npm("SimpleAccount"),
      ],
      [`SimpleAccountFactory v${version}`, simpleAccountFactoryAbi, npm("SimpleAccountFactory")],
    ] as const;
  }),
] as const;

for (const [name, subset, full] of subsets) {
  test(`every item of the hand-written ${name} ABI exists, identical, in the npm artifact`, () => {
    const known = new Set(full.map(describe));
    assert.ok(subset.length > 0);
    for (const item of subset) assert.ok(known.has(describe(item)), `${describe(item)} not in ${name}`);
  });
}

test("artifacts carry deployable bytecode, and our ABI module matches our JSON artifact", async () => {
  for (const artifact of [
    entryPointArtifact,
    simpleAccountArtifact,
    simpleAccountFactoryArtifact,
    verifyingPaymasterArtifact,
  ]) {
    assert.match(artifact.bytecode, /^0x[0-9a-f]{200,}$/, artifact.contractName);
    assert.match(artifact.deployedBytecode, /^0x[0-9a-f]{200,}$/, artifact.contractName);
  }
  const { default: json } = await import("../../contracts/artifacts/VerifyingPaymaster.json", {
    with: { type: "json" },
  });
  assert.equal(verifyingPaymasterArtifact.contractName, "VerifyingPaymaster");
  assert.deepEqual(verifyingPaymasterArtifact.abi, json.abi);
  const names: string[] = verifyingPaymasterArtifact.abi.map((item) => ("name" in item ? item.name : item.type));
  for (const name of [
    "depositFor",
    "withdrawTo",
    "getBalance",
    "getHash",
    "addSigner",
    "removeSigner",
    "isSigner",
    "GasCharged",
  ]) {
    assert.ok(names.includes(name), name);
  }
});
