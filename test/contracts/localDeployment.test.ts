import assert from "node:assert/strict";
import { performance } from "node:perf_hooks";
import { test } from "node:test";
import { type Address, parseAbi, size } from "viem";
import { mnemonicToAccount, privateKeyToAccount } from "viem/accounts";
import { ENTRY_POINT_V06_ADDRESS } from "../../src/bindings/entryPoints/entryPoint";
import {
  entryPointArtifact,
  verifyingPaymasterArtifact,
  verifyingPaymasterV07Artifact,
  verifyingPaymasterV09Artifact,
} from "../../src/bindings/paymasters/artifacts";
import { tokenPaymasterV07Artifact } from "../../src/bindings/paymasters/tokenArtifacts";
import { LOCAL_ENTRY_POINT_STACKS } from "../../src/chain/localAddresses";
import {
  ANVIL_FIRST_ACCOUNT,
  entryPointDeployment,
  LOCAL_VERIFYING_PAYMASTER_ADDRESS,
  simpleAccountFactoryDeployment,
} from "../../src/devChain/deployments";
import {
  addSignerToPaymasters,
  addVerifyingPaymasterSigner,
  deployLaterEntryPointStacks,
  deployLocalStack,
} from "../../src/devChain/localDeployment";
import { simpleAccountFactoryAbi } from "../../src/devChain/simpleAccount";
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
  const read = <F extends "entryPoint" | "owner" | "signerCount">(functionName: F) =>
    env.publicClient.readContract({ ...paymaster, functionName });
  const isSigner = (address: Address) =>
    env.publicClient.readContract({ ...paymaster, functionName: "isSigner", args: [address] });
  assert.equal(await read("entryPoint"), ENTRY_POINT_V06_ADDRESS);
  assert.equal(await read("owner"), ANVIL_FIRST_ACCOUNT);
  // Deployed with no signer: the owner is not one either, so nothing is sponsored until a key is added.
  assert.deepEqual([await read("signerCount"), await isSigner(ANVIL_FIRST_ACCOUNT)], [0n, false]);

  // Idempotent: nothing is sent the second time.
  const blockBefore = await env.publicClient.getBlockNumber();
  const again = await deployLocalStack(owner);
  assert.deepEqual(
    [again.entryPoint.deployed, again.simpleAccountFactory.deployed, again.verifyingPaymaster.deployed],
    [false, false, false],
  );
  assert.equal(await env.publicClient.getBlockNumber(), blockBefore);

  // Adding the service's key: only the owner can, and a second call with the same key sends nothing.
  const serviceKey = privateKeyToAccount(anvilKeys.stranger).address;
  await assert.rejects(
    addVerifyingPaymasterSigner(env.clients(anvilKeys.stranger), serviceKey),
    /only the paymaster's owner/,
  );
  assert.equal((await addVerifyingPaymasterSigner(owner, serviceKey)).changed, true);
  assert.deepEqual([await isSigner(serviceKey), await read("signerCount")], [true, 1n]);
  const blockAfterAddition = await env.publicClient.getBlockNumber();
  assert.equal((await addVerifyingPaymasterSigner(owner, serviceKey)).changed, false);
  assert.equal(await env.publicClient.getBlockNumber(), blockAfterAddition);
});

test("deploys the EntryPoint v0.7 and v0.8 stacks together at the written addresses, then skips them, and adds the service's key to all four together", async (t) => {
  const env = await startLocalChain();
  t.after(() => env.anvil.stop());
  const owner = env.clients(anvilKeys.owner);
  const started = performance.now();
  const stacks = await deployLaterEntryPointStacks(owner);
  t.diagnostic(`deploy of 9 contracts in one batch ${(performance.now() - started).toFixed(0)} ms`);
  for (const version of ["0.7", "0.8"] as const) {
    const written = LOCAL_ENTRY_POINT_STACKS[version];
    const stack = stacks[version];
    assert.deepEqual(
      [
        stack.entryPoint,
        stack.simpleAccountFactory,
        stack.verifyingPaymaster,
        stack.tokenPaymaster,
        stack.permitTokenPaymaster,
        stack.simple7702Account,
      ].map((step) => step && [step.address, step.deployed]),
      [
        [written.entryPoint, true],
        [written.simpleAccountFactory, true],
        [written.verifyingPaymaster, true],
        [written.tokenPaymaster, true],
        [written.permitTokenPaymaster, true],
        written.simple7702Account && [written.simple7702Account, true],
      ],
    );
    for (const address of [
      written.entryPoint,
      written.simpleAccountFactory,
      written.verifyingPaymaster,
      written.tokenPaymaster,
      written.permitTokenPaymaster,
    ]) {
      assert.ok(size((await env.publicClient.getCode({ address })) ?? "0x") > 0, `code at ${address}`);
    }
    // entryPoint() and owner() read alike in the three contracts.
    for (const address of [written.verifyingPaymaster, written.tokenPaymaster, written.permitTokenPaymaster]) {
      const read = (functionName: "entryPoint" | "owner") =>
        env.publicClient.readContract({ address, abi: verifyingPaymasterV07Artifact.abi, functionName });
      assert.deepEqual([await read("entryPoint"), await read("owner")], [written.entryPoint, ANVIL_FIRST_ACCOUNT]);
    }
    // Unfunded and unstaked until the local chain's start funds them (test/chain/localChain.test.ts).
    const deposit = await env.publicClient.readContract({
      address: written.tokenPaymaster,
      abi: tokenPaymasterV07Artifact.abi,
      functionName: "getDeposit",
    });
    assert.equal(deposit, 0n);
  }
  // The v0.8 factory was built against its EntryPoint's SenderCreator, so the order within the batch held.
  const senderCreator = await env.publicClient.readContract({
    address: LOCAL_ENTRY_POINT_STACKS["0.8"].simpleAccountFactory,
    abi: parseAbi(["function senderCreator() view returns (address)"]),
    functionName: "senderCreator",
  });
  assert.ok(size((await env.publicClient.getCode({ address: senderCreator })) ?? "0x") > 0);

  // v0.9: the release's EntryPoint, Simple7702Account and factory at their public addresses, our two paymasters for it.
  const v09 = LOCAL_ENTRY_POINT_STACKS["0.9"];
  assert.deepEqual(
    Object.entries(stacks["0.9"]).map(([name, step]) => [name, step.address, step.deployed]),
    Object.entries(stacks["0.9"]).map(([name]) => [name, v09[name as keyof typeof v09], true]),
  );
  for (const address of Object.values(v09)) {
    assert.ok(size((await env.publicClient.getCode({ address })) ?? "0x") > 0, `code at ${address}`);
  }
  const readV09 = (functionName: "entryPoint" | "owner" | "signerCount") =>
    env.publicClient.readContract({
      address: v09.verifyingPaymaster,
      abi: verifyingPaymasterV09Artifact.abi,
      functionName,
    });
  // No signer until the owner adds one: the address depends on no service key.
  assert.deepEqual(
    [await readV09("entryPoint"), await readV09("owner"), await readV09("signerCount")],
    [v09.entryPoint, ANVIL_FIRST_ACCOUNT, 0n],
  );
  const v09Factory = await env.publicClient.readContract({
    address: v09.simpleAccountFactory,
    abi: parseAbi(["function accountImplementation() view returns (address)"]),
    functionName: "accountImplementation",
  });
  assert.ok(size((await env.publicClient.getCode({ address: v09Factory })) ?? "0x") > 0);

  const blockBefore = await env.publicClient.getBlockNumber();
  const again = await deployLaterEntryPointStacks(owner);
  assert.deepEqual(
    Object.values(again).flatMap((stack) => Object.values(stack).map((step) => step.deployed)),
    Array.from({ length: 17 }, () => false),
  );
  assert.equal(await env.publicClient.getBlockNumber(), blockBefore);

  // The token paymasters hold their signers as the verifying ones do (SignerSet), VerifyingPaymasterV09 too: one
  // batch serves all six.
  const paymasters = [
    LOCAL_ENTRY_POINT_STACKS["0.7"].verifyingPaymaster,
    LOCAL_ENTRY_POINT_STACKS["0.7"].tokenPaymaster,
    LOCAL_ENTRY_POINT_STACKS["0.8"].verifyingPaymaster,
    LOCAL_ENTRY_POINT_STACKS["0.8"].tokenPaymaster,
    LOCAL_ENTRY_POINT_STACKS["0.9"].verifyingPaymaster,
    LOCAL_ENTRY_POINT_STACKS["0.9"].tokenPaymaster,
  ];
  const serviceKey = privateKeyToAccount(anvilKeys.stranger).address;
  await assert.rejects(
    addSignerToPaymasters(env.clients(anvilKeys.stranger), serviceKey, paymasters),
    /only the paymaster's owner/,
  );
  assert.equal(await env.publicClient.getBlockNumber(), blockBefore, "a refused addition sends nothing");
  assert.deepEqual(await addSignerToPaymasters(owner, serviceKey, paymasters), paymasters);
  for (const address of paymasters) {
    const accepted = await env.publicClient.readContract({
      address,
      abi: verifyingPaymasterV07Artifact.abi,
      functionName: "isSigner",
      args: [serviceKey],
    });
    assert.equal(accepted, true, address);
  }
  assert.deepEqual(await addSignerToPaymasters(owner, serviceKey, paymasters), []);
});
