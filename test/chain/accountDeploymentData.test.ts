// The smart accounts' deployment data (contracts/accounts/*.json) is checked when it loads: each entry's address is
// recomputed from its deployer, salt and creation code, so an edited file fails before anything is deployed. What that
// check proves differs between CREATE2 (the code too) and CREATE3 (only the salt), and both are shown here.
import assert from "node:assert/strict";
import { test } from "node:test";
import { concat, isAddressEqual, slice } from "viem";
import nexusData from "../../contracts/accounts/nexus.json" with { type: "json" };
import safeData from "../../contracts/accounts/safe.json" with { type: "json" };
import {
  deploymentCallData,
  landingAddress,
  loadAccountDeploymentData,
} from "../../src/devChain/accountDeploymentData";
import { ACCOUNT_FAMILIES } from "../../src/devChain/accountFamilies";

/** A copy of the file with one entry's fields replaced. */
function edited<T extends { deployments: Record<string, unknown>[] }>(data: T, index: number, change: object): T {
  return { ...data, deployments: data.deployments.map((entry, i) => (i === index ? { ...entry, ...change } : entry)) };
}

/** The creation code with its last byte changed. */
function flipLastByte(initCode: string): `0x${string}` {
  const last = Number.parseInt(initCode.slice(-2), 16);
  return `${initCode.slice(0, -2)}${((last + 1) % 256).toString(16).padStart(2, "0")}` as `0x${string}`;
}

test("every family's data loads, and every entry lands where it says", () => {
  assert.equal(ACCOUNT_FAMILIES.length, 4);
  for (const family of ACCOUNT_FAMILIES) {
    assert.ok(family.data.source.length > 0, `${family.name} names its source`);
    for (const deployment of family.data.deployments) {
      assert.ok(isAddressEqual(landingAddress(deployment), deployment.address), deployment.name);
    }
  }
});

test("CREATE2 data whose creation code was changed is refused, naming the file, the contract and the address", () => {
  const safeSingleton = safeData.deployments[0];
  assert.ok(safeSingleton);
  const tampered = edited(safeData, 0, { initCode: flipLastByte(safeSingleton.initCode) });
  assert.throws(
    () => loadAccountDeploymentData(tampered, "safe.json"),
    /^Error: safe\.json: Safe 1\.4\.1 singleton would land at 0x[0-9a-fA-F]{40}, not at 0x41675C099F32341bf84BFc5382aF534df5C7461a where wallets look for it$/,
  );
});

test("an entry without a 32-byte salt is refused with the fields it needs", () => {
  assert.throws(
    () => loadAccountDeploymentData(edited(safeData, 1, { salt: "0x00" }), "safe.json"),
    /safe\.json: deployments\[1\] needs name, address, deployer, a 32-byte salt and initCode/,
  );
  assert.throws(() => loadAccountDeploymentData({ deployments: [] }, "x.json"), /x\.json: expected \{source/);
});

test("CREATE3 (Nexus): the address follows from the salt, so a changed code still lands there and only the source vouches for it", () => {
  const index = nexusData.deployments.findIndex((entry) => entry.create3);
  const entry = nexusData.deployments[index];
  assert.ok(entry);
  const changedCode = edited(nexusData, index, { initCode: flipLastByte(entry.initCode) });
  assert.doesNotThrow(() => loadAccountDeploymentData(changedCode, "nexus.json"));
  const changedSalt = edited(nexusData, index, { salt: concat([slice(entry.salt as `0x${string}`, 0, 31), "0x00"]) });
  assert.throws(() => loadAccountDeploymentData(changedSalt, "nexus.json"), /would land at/);
});

test("the deployment transaction's data: salt ‖ code for the CREATE2 proxies, deploy(salt, code) for the CREATE3 factory", () => {
  const [create2] = loadAccountDeploymentData(safeData, "safe.json").deployments;
  assert.ok(create2);
  assert.equal(deploymentCallData(create2), concat([create2.salt, create2.initCode]));
  const create3 = loadAccountDeploymentData(nexusData, "nexus.json").deployments.find((entry) => entry.create3);
  assert.ok(create3);
  // deploy(bytes32,bytes)
  assert.equal(slice(deploymentCallData(create3), 0, 4), "0xcdcb760a");
});
