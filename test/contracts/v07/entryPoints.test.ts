// The test helper puts both stacks on one chain at the addresses public chains have them at, and deploying again is a
// no-op (later test files call it on chains that may already carry them).
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { Address } from "viem";
import { simple7702AccountDeployment } from "../../../src/devChain/entryPointV07Deployments";
import { simpleAccountAbi, simpleAccountFactoryAbi } from "../../../src/devChain/simpleAccount";
import { deployEntryPointStack } from "../../helpers/entryPointsV07";
import { anvilKeys, type LocalChain, startLocalChain } from "../fixtures";

let env: LocalChain;
before(async () => {
  env = await startLocalChain();
});
after(() => env?.anvil.stop());

async function hasCode(address: Address): Promise<boolean> {
  const code = await env.publicClient.getCode({ address });
  return code !== undefined && code !== "0x";
}

test("EntryPoint v0.7 and v0.8, their factories and Simple7702Account land at their canonical addresses", async () => {
  const v07 = await deployEntryPointStack(env, anvilKeys.owner, "0.7");
  const v08 = await deployEntryPointStack(env, anvilKeys.owner, "0.8");
  const expected: [Address, Address][] = [
    [v07.entryPoint.address, "0x0000000071727De22E5E9d8BAf0edAc6f37da032"],
    [v07.simpleAccountFactory.address, "0x91E60e0613810449d098b0b5Ec8b51A0FE8c8985"],
    [v08.entryPoint.address, "0x4337084D9E255Ff0702461CF8895CE9E3b5Ff108"],
    [v08.simpleAccountFactory.address, "0x13E9ed32155810FDbd067D4522C492D6f68E5944"],
    [simple7702AccountDeployment().address, "0xe6Cae83BdE06E4c305530e199D7217f42808555B"],
  ];
  for (const [address, canonical] of expected) {
    assert.equal(address, canonical);
    assert.ok(await hasCode(canonical), `no code at ${canonical}`);
  }
  // Each factory serves its own EntryPoint: its account implementation reports it.
  for (const stack of [v07, v08]) {
    const implementation = await env.publicClient.readContract({
      address: stack.simpleAccountFactory.address,
      abi: simpleAccountFactoryAbi,
      functionName: "accountImplementation",
    });
    const entryPoint = await env.publicClient.readContract({
      address: implementation,
      abi: simpleAccountAbi,
      functionName: "entryPoint",
    });
    assert.equal(entryPoint, stack.entryPoint.address);
  }

  const blockBefore = await env.publicClient.getBlockNumber();
  await deployEntryPointStack(env, anvilKeys.owner, "0.8");
  assert.equal(await env.publicClient.getBlockNumber(), blockBefore, "a second deployment sent transactions");
});
