import assert from "node:assert/strict";
import { test } from "node:test";
import {
  fixedPriceAggregatorArtifact,
  testTokenArtifact,
  tokenPaymasterArtifact,
  tokenPaymasterV07Artifact,
} from "../../src/bindings/paymasters/tokenArtifacts";

test("the ERC20-mode artifacts carry deployable bytecode, and each ABI module matches its JSON artifact", async () => {
  for (const artifact of [
    tokenPaymasterArtifact,
    tokenPaymasterV07Artifact,
    testTokenArtifact,
    fixedPriceAggregatorArtifact,
  ]) {
    assert.match(artifact.bytecode, /^0x[0-9a-f]{200,}$/, artifact.contractName);
    assert.match(artifact.deployedBytecode, /^0x[0-9a-f]{200,}$/, artifact.contractName);
    const { default: json } = await import(`../../contracts/artifacts/${artifact.contractName}.json`, {
      with: { type: "json" },
    });
    assert.deepEqual(artifact.abi, json.abi, artifact.contractName);
  }
  const names: string[] = tokenPaymasterArtifact.abi.map((item) => ("name" in item ? item.name : item.type));
  for (const name of ["getHash", "tokenAmount", "oracleRate", "TokenCharged", "TokenChargeFailed", "withdrawToken"]) {
    assert.ok(names.includes(name), name);
  }
  // v0.7/v0.8 has no failed-charge record: a failed pull reverts postOp, and the EntryPoint reports it.
  const namesV07: string[] = tokenPaymasterV07Artifact.abi.map((item) => ("name" in item ? item.name : item.type));
  for (const name of [
    "getHash",
    "tokenAmount",
    "oracleRate",
    "TokenCharged",
    "withdrawToken",
    "POST_OP_OVERHEAD_GAS",
  ]) {
    assert.ok(namesV07.includes(name), name);
  }
  assert.ok(!namesV07.includes("TokenChargeFailed"));
});
