import assert from "node:assert/strict";
import { performance } from "node:perf_hooks";
import { test } from "node:test";
import { getAddress, size } from "viem";
import { mnemonicToAccount, privateKeyToAccount } from "viem/accounts";
import { entryPointArtifact, verifyingPaymasterArtifact } from "../../src/chain/artifacts";
import {
  ANVIL_FIRST_ACCOUNT,
  entryPointDeployment,
  LOCAL_VERIFYING_PAYMASTER_ADDRESS,
  simpleAccountFactoryDeployment,
} from "../../src/chain/deployments";
import { ENTRY_POINT_V06_ADDRESS } from "../../src/chain/entryPoint";
import { deployLocalStack, rotateVerifyingSigner } from "../../src/chain/localDeployment";
import { simpleAccountFactoryAbi } from "../../src/chain/simpleAccount";
import { anvilKeys, startLocalChain } from "./fixtures";

test("the npm EntryPoint bytecode yields the canonical v0.6 address through the CREATE2 deployer", () => {
  assert.equal(entryPointDeployment.address, ENTRY_POINT_V06_ADDRESS);
  // The v0.6 SimpleAccountFactory deployment that wallets know, with the canonical EntryPoint as its argument.
  assert.equal(simpleAccountFactoryDeployment.address, "0x9406Cc6185a346906296840746125a0E44976454");
  assert.equal(privateKeyToAccount(anvilKeys.owner).address, ANVIL_FIRST_ACCOUNT);
});

test("the test roles hold anvil's default funded accounts", async () => {
  // mnemonicToAccount is slow (PBKDF2), so the fixtures hard-code the keys; this keeps them honest.
  for (const [index, key] of Object.values(anvilKeys).entries()) {
    const derived = mnemonicToAccount("test test test test test test test test test test test junk", {
      addressIndex: index,
    });
    assert.equal(privateKeyToAccount(key).address, derived.address);
  }
});

test("deploys the stack at its deterministic addresses, then skips it, and rotates the signer", async (t) => {
  const started = performance.now();
  const env = await startLocalChain();
  t.after(() => env.anvil.stop());
  const ready = performance.now();
  const owner = env.clients(anvilKeys.owner);
  const stack = await deployLocalStack(owner);
  const deployed = performance.now();
  t.diagnostic(
    `anvil start ${(ready - started).toFixed(0)} ms, deploy of 3 contracts ${(deployed - ready).toFixed(0)} ms`,
  );

  assert.deepEqual(
    [stack.entryPoint, stack.simpleAccountFactory, stack.verifyingPaymaster].map((step) => [
      step.address,
      step.deployed,
    ]),
    [
      [ENTRY_POINT_V06_ADDRESS, true],
      [simpleAccountFactoryDeployment.address, true],
      [LOCAL_VERIFYING_PAYMASTER_ADDRESS, true],
    ],
  );
  const entryPointCode = await env.publicClient.getCode({ address: ENTRY_POINT_V06_ADDRESS });
  assert.equal(size(entryPointCode ?? "0x"), size(entryPointArtifact.deployedBytecode));
  const paymasterCode = await env.publicClient.getCode({ address: LOCAL_VERIFYING_PAYMASTER_ADDRESS });
  assert.equal(size(paymasterCode ?? "0x"), size(verifyingPaymasterArtifact.deployedBytecode));
  const implementation = await env.publicClient.readContract({
    address: simpleAccountFactoryDeployment.address,
    abi: simpleAccountFactoryAbi,
    functionName: "accountImplementation",
  });
  assert.ok(size((await env.publicClient.getCode({ address: implementation })) ?? "0x") > 0);

  const paymaster = { address: LOCAL_VERIFYING_PAYMASTER_ADDRESS, abi: verifyingPaymasterArtifact.abi } as const;
  const read = <F extends "entryPoint" | "owner" | "verifyingSigner">(functionName: F) =>
    env.publicClient.readContract({ ...paymaster, functionName });
  assert.equal(await read("entryPoint"), ENTRY_POINT_V06_ADDRESS);
  assert.equal(await read("owner"), ANVIL_FIRST_ACCOUNT);
  assert.equal(await read("verifyingSigner"), ANVIL_FIRST_ACCOUNT);

  // Idempotent: nothing is sent the second time.
  const blockBefore = await env.publicClient.getBlockNumber();
  const again = await deployLocalStack(owner);
  assert.deepEqual(
    [again.entryPoint.deployed, again.simpleAccountFactory.deployed, again.verifyingPaymaster.deployed],
    [false, false, false],
  );
  assert.equal(await env.publicClient.getBlockNumber(), blockBefore);

  // Signer rotation: only the owner can, and a second call with the same signer sends nothing.
  const serviceKey = privateKeyToAccount(anvilKeys.stranger).address;
  await assert.rejects(
    rotateVerifyingSigner(env.clients(anvilKeys.stranger), serviceKey),
    /only the paymaster's owner/,
  );
  assert.equal((await rotateVerifyingSigner(owner, serviceKey)).changed, true);
  assert.equal(await read("verifyingSigner"), getAddress(serviceKey));
  const blockAfterRotation = await env.publicClient.getBlockNumber();
  assert.equal((await rotateVerifyingSigner(owner, serviceKey)).changed, false);
  assert.equal(await env.publicClient.getBlockNumber(), blockAfterRotation);
});
