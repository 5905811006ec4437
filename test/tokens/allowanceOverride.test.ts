// Where a fee token keeps its allowances, found by one eth_call on a real node (anvil): the local TUSD (OpenZeppelin 4),
// and stand-ins with the other layouts the service knows (Vyper's key order, OpenZeppelin 5's namespaced storage),
// put on chain with anvil_setCode. The override it gives makes allowance(owner, spender) read large in that call only;
// a token of an unknown layout, or no token at all, gives none.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { type Address, encodeFunctionData, erc20Abi, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { ENTRY_POINT_V06_ADDRESS } from "../../src/bindings/entryPoints/entryPoint";
import type { SponsoringChain } from "../../src/chain/sponsoringChains";
import {
  deployLocalTokenStack,
  LOCAL_TEST_TOKEN_ADDRESS,
  LOCAL_TOKEN_PAYMASTER_ADDRESS,
} from "../../src/devChain/tokenDeployment";
import { toViemStateOverride } from "../../src/gasEstimation/storageOverride";
import {
  allowanceLayout,
  allowanceOverride,
  approvesSpender,
  SIMULATED_ALLOWANCE,
} from "../../src/tokens/allowanceOverride";
import { anvilKeys, type LocalChain, startLocalChain } from "../contracts/fixtures";

// Stand-in tokens: allowance() reads the slot a layout puts allowances[owner][spender] at, and nothing else.
const STAND_INS = `
// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;
contract VyperOrder {
  function allowance(address owner, address spender) external view returns (uint256 value) {
    bytes32 slot = keccak256(abi.encode(keccak256(abi.encode(uint256(5), owner)), spender));
    assembly { value := sload(slot) }
  }
}
contract OpenZeppelin5 {
  function allowance(address owner, address spender) external view returns (uint256 value) {
    uint256 base = 0x52c63247e1f47db19d5ce0460030c497f067ca4cebf71ba98eeadabe20bace00 + 1;
    bytes32 slot = keccak256(abi.encode(spender, keccak256(abi.encode(owner, base))));
    assembly { value := sload(slot) }
  }
}
contract PackedKeys {
  function allowance(address owner, address spender) external view returns (uint256 value) {
    bytes32 slot = keccak256(abi.encodePacked(owner, spender));
    assembly { value := sload(slot) }
  }
}
`;

async function standInCode(): Promise<Record<string, Hex>> {
  const { default: solc } = (await import("solc")) as { default: { compile(input: string): string } };
  const output = JSON.parse(
    solc.compile(
      JSON.stringify({
        language: "Solidity",
        sources: { "StandIns.sol": { content: STAND_INS } },
        settings: { outputSelection: { "*": { "*": ["evm.deployedBytecode.object"] } } },
      }),
    ),
  ) as {
    errors?: { severity: string; formattedMessage: string }[];
    contracts: Record<string, Record<string, { evm: { deployedBytecode: { object: string } } }>>;
  };
  const errors = (output.errors ?? []).filter((error) => error.severity === "error");
  assert.equal(errors.length, 0, errors.map((error) => error.formattedMessage).join("\n"));
  const contracts = output.contracts["StandIns.sol"] ?? {};
  return Object.fromEntries(
    Object.entries(contracts).map(([name, contract]) => [name, `0x${contract.evm.deployedBytecode.object}` as Hex]),
  );
}

let env: LocalChain | undefined;
let chain: SponsoringChain;
const standIns: Record<string, Address> = {};

before(async () => {
  env = await startLocalChain();
  await deployLocalTokenStack(env.clients(anvilKeys.owner));
  chain = {
    chainId: env.anvil.chainId,
    name: "local",
    entryPoint: ENTRY_POINT_V06_ADDRESS,
    rpcUrl: env.anvil.rpcUrl,
    entryPoints: new Map(),
  };
  for (const [name, code] of Object.entries(await standInCode())) {
    const address = privateKeyToAccount(generatePrivateKey()).address;
    await env.testClient.setCode({ address, bytecode: code });
    standIns[name] = address;
  }
});

after(async () => {
  await env?.anvil.stop();
});

/** allowance(owner, spender) in an eth_call with the override, and without it. */
async function allowanceWith(token: Address, owner: Address, spender: Address) {
  assert.ok(env);
  const override = await allowanceOverride(chain, token, owner, spender);
  assert.ok(override, `no override for ${token}`);
  const read = (stateOverride?: ReturnType<typeof toViemStateOverride>) =>
    env?.publicClient.readContract({
      address: token,
      abi: erc20Abi,
      functionName: "allowance",
      args: [owner, spender],
      stateOverride,
    });
  return { overridden: await read(toViemStateOverride([override])), real: await read() };
}

test("the local TUSD (OpenZeppelin 4): allowances at slot 1, and the override reads as the simulated allowance", async () => {
  assert.deepEqual(await allowanceLayout(chain, LOCAL_TEST_TOKEN_ADDRESS), { base: 1n, keyOrder: "solidity" });
  const owner = privateKeyToAccount(generatePrivateKey()).address;
  const { overridden, real } = await allowanceWith(LOCAL_TEST_TOKEN_ADDRESS, owner, LOCAL_TOKEN_PAYMASTER_ADDRESS);
  assert.equal(overridden, SIMULATED_ALLOWANCE);
  assert.equal(real, 0n, "nothing is written on chain");
  // The override is of that owner and spender only: the reverse pair reads its real allowance in the same call.
  const override = await allowanceOverride(chain, LOCAL_TEST_TOKEN_ADDRESS, owner, LOCAL_TOKEN_PAYMASTER_ADDRESS);
  assert.ok(override);
  const reverse = await env?.publicClient.readContract({
    address: LOCAL_TEST_TOKEN_ADDRESS,
    abi: erc20Abi,
    functionName: "allowance",
    args: [LOCAL_TOKEN_PAYMASTER_ADDRESS, owner],
    stateOverride: toViemStateOverride([override]),
  });
  assert.equal(reverse, 0n);
});

test("Vyper's key order and OpenZeppelin 5's namespaced storage are found too", async () => {
  const owner = privateKeyToAccount(generatePrivateKey()).address;
  const spender = privateKeyToAccount(generatePrivateKey()).address;
  const vyper = standIns.VyperOrder as Address;
  const openZeppelin5 = standIns.OpenZeppelin5 as Address;
  assert.deepEqual(await allowanceLayout(chain, vyper), { base: 5n, keyOrder: "vyper" });
  assert.equal((await allowanceWith(vyper, owner, spender)).overridden, SIMULATED_ALLOWANCE);
  assert.deepEqual(await allowanceLayout(chain, openZeppelin5), {
    base: 0x52c63247e1f47db19d5ce0460030c497f067ca4cebf71ba98eeadabe20bace01n,
    keyOrder: "solidity",
  });
  assert.equal((await allowanceWith(openZeppelin5, owner, spender)).overridden, SIMULATED_ALLOWANCE);
});

test("an unknown layout, an address without code, or a chain without a node: no override", async () => {
  const owner = privateKeyToAccount(generatePrivateKey()).address;
  assert.equal(
    await allowanceOverride(chain, standIns.PackedKeys as Address, owner, LOCAL_TOKEN_PAYMASTER_ADDRESS),
    undefined,
  );
  const nowhere = privateKeyToAccount(generatePrivateKey()).address;
  assert.equal(await allowanceOverride(chain, nowhere, owner, LOCAL_TOKEN_PAYMASTER_ADDRESS), undefined);
  const { rpcUrl: _, ...withoutNode } = chain;
  assert.equal(
    await allowanceOverride(
      { ...withoutNode, chainId: 999 },
      LOCAL_TEST_TOKEN_ADDRESS,
      owner,
      LOCAL_TOKEN_PAYMASTER_ADDRESS,
    ),
    undefined,
  );
});

test("approvesSpender finds approve(spender, …) in an account's calldata, of that spender only", () => {
  const approve = (spender: Address) =>
    encodeFunctionData({ abi: erc20Abi, functionName: "approve", args: [spender, 123n] });
  // As an account embeds it: after a selector and other words, at any offset.
  const embedded = (inner: Hex): Hex =>
    `0xb61d27f6${"00".repeat(12)}${LOCAL_TEST_TOKEN_ADDRESS.slice(2)}${"00".repeat(64)}${inner.slice(2)}`;
  assert.equal(approvesSpender(embedded(approve(LOCAL_TOKEN_PAYMASTER_ADDRESS)), LOCAL_TOKEN_PAYMASTER_ADDRESS), true);
  assert.equal(
    approvesSpender(
      embedded(approve(LOCAL_TOKEN_PAYMASTER_ADDRESS)).toUpperCase().replace("0X", "0x") as Hex,
      LOCAL_TOKEN_PAYMASTER_ADDRESS,
    ),
    true,
  );
  const stranger = privateKeyToAccount(generatePrivateKey()).address;
  assert.equal(approvesSpender(embedded(approve(stranger)), LOCAL_TOKEN_PAYMASTER_ADDRESS), false);
  assert.equal(
    approvesSpender(
      embedded(
        encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [LOCAL_TOKEN_PAYMASTER_ADDRESS, 1n] }),
      ),
      LOCAL_TOKEN_PAYMASTER_ADDRESS,
    ),
    false,
  );
});
