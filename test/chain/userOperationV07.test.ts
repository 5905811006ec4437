// Our v0.7/v0.8 user operation hash against viem's getUserOperationHash (a table of shapes) and against the real
// EntryPoint's getUserOpHash on anvil, the authority settlement matches events with.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { type Address, concat, type Hex, parseGwei } from "viem";
import { getUserOperationHash, type UserOperation } from "viem/account-abstraction";
import {
  ENTRY_POINT_V07_ADDRESS,
  ENTRY_POINT_V08_ADDRESS,
  entryPointV07Abi,
} from "../../src/bindings/entryPoints/entryPointV07";
import {
  type EntryPointVersionV07,
  getUserOpHashV07,
  packUserOperation,
  type UserOperationV07,
} from "../../src/bindings/entryPoints/userOperationV07";
import { anvilKeys, type LocalChain, startLocalChain } from "../contracts/fixtures";
import { deployEntryPointStack } from "../helpers/entryPointsV07";

const SENDER: Address = "0x1111111111111111111111111111111111111111";
const DELEGATE: Address = "0xe6Cae83BdE06E4c305530e199D7217f42808555B";

const base: UserOperationV07 = {
  sender: SENDER,
  nonce: 7n,
  callData: "0xb61d27f6",
  callGasLimit: 100_000n,
  verificationGasLimit: 300_000n,
  preVerificationGas: 50_000n,
  maxFeePerGas: parseGwei("2"),
  maxPriorityFeePerGas: parseGwei("1"),
  signature: "0x1234",
};

const shapes: [string, UserOperationV07][] = [
  ["an existing account, no paymaster", base],
  [
    "a first operation with factory and factoryData",
    { ...base, factory: "0x91E60e0613810449d098b0b5Ec8b51A0FE8c8985", factoryData: "0x5fbfb9cf0000" },
  ],
  [
    "a sponsored operation",
    {
      ...base,
      paymaster: "0x2222222222222222222222222222222222222222",
      paymasterVerificationGasLimit: 45_000n,
      paymasterPostOpGasLimit: 10_000n,
      paymasterData: `0x${"ab".repeat(256)}`,
    },
  ],
  ["a nonce with a key", { ...base, nonce: (5n << 64n) + 3n }],
];

const auth = {
  chainId: 31337n,
  address: DELEGATE,
  nonce: 0n,
  yParity: 1,
  r: `0x${"11".repeat(32)}` as Hex,
  s: `0x${"22".repeat(32)}` as Hex,
};
const eip7702Shapes: [string, UserOperationV07][] = [
  ["an EIP-7702 operation (marker, no factoryData)", { ...base, factory: "0x7702", eip7702Auth: auth }],
  [
    "an EIP-7702 operation with initialisation data after the padded marker",
    { ...base, factory: "0x7702000000000000000000000000000000000000", factoryData: "0xabcdef", eip7702Auth: auth },
  ],
];

function viemHash(op: UserOperationV07, version: EntryPointVersionV07, entryPoint: Address, chainId: number): Hex {
  const userOperation = {
    ...op,
    ...(op.eip7702Auth
      ? {
          authorization: {
            ...op.eip7702Auth,
            chainId: Number(op.eip7702Auth.chainId),
            nonce: Number(op.eip7702Auth.nonce),
          },
        }
      : {}),
  } as unknown as UserOperation<"0.7">;
  return getUserOperationHash({ userOperation, entryPointAddress: entryPoint, entryPointVersion: version, chainId });
}

for (const version of ["0.7", "0.8"] as const) {
  const entryPoint = version === "0.7" ? ENTRY_POINT_V07_ADDRESS : ENTRY_POINT_V08_ADDRESS;
  for (const [name, op] of [...shapes, ...(version === "0.8" ? eip7702Shapes : [])]) {
    test(`v${version} hash equals viem's: ${name}`, () => {
      for (const chainId of [1, 31337, 84532]) {
        assert.equal(getUserOpHashV07(op, entryPoint, chainId, version), viemHash(op, version, entryPoint, chainId));
      }
    });
  }
}

test("the hash changes with every signed field and with the chain and EntryPoint, but not with the signature", () => {
  const [, op] = shapes.find(([name]) => name === "a sponsored operation") ?? assert.fail("no sponsored shape");
  const hash = getUserOpHashV07(op, ENTRY_POINT_V08_ADDRESS, 1, "0.8");
  const variants: UserOperationV07[] = [
    { ...op, nonce: op.nonce + 1n },
    { ...op, callGasLimit: op.callGasLimit + 1n },
    { ...op, paymasterPostOpGasLimit: 10_001n },
    { ...op, paymasterData: `0x${"ab".repeat(255)}ac` },
  ];
  for (const variant of variants) assert.notEqual(getUserOpHashV07(variant, ENTRY_POINT_V08_ADDRESS, 1, "0.8"), hash);
  assert.notEqual(getUserOpHashV07(op, ENTRY_POINT_V08_ADDRESS, 2, "0.8"), hash);
  assert.notEqual(getUserOpHashV07(op, ENTRY_POINT_V07_ADDRESS, 1, "0.8"), hash);
  assert.equal(getUserOpHashV07({ ...op, signature: "0xffff" }, ENTRY_POINT_V08_ADDRESS, 1, "0.8"), hash);
});

let env: LocalChain;
before(async () => {
  env = await startLocalChain();
  await deployEntryPointStack(env, anvilKeys.owner, "0.7");
  await deployEntryPointStack(env, anvilKeys.owner, "0.8");
  // The EntryPoint reads an EIP-7702 sender's code for the delegate: give the sender a delegation designator.
  await env.testClient.setCode({ address: SENDER, bytecode: concat(["0xef0100", DELEGATE]) });
});
after(() => env?.anvil.stop());

// viem keeps the data after a short marker; the EntryPoint reads 20 bytes as the marker, so here it keeps none.
const shortMarkerWithData: [string, UserOperationV07] = [
  "an EIP-7702 operation with data after the 2-byte marker",
  { ...base, factory: "0x7702", factoryData: "0xabcdef", eip7702Auth: auth },
];

for (const version of ["0.7", "0.8"] as const) {
  test(`v${version} hash equals the EntryPoint's getUserOpHash on chain`, async () => {
    const entryPoint = version === "0.7" ? ENTRY_POINT_V07_ADDRESS : ENTRY_POINT_V08_ADDRESS;
    for (const [name, op] of [...shapes, ...(version === "0.8" ? [...eip7702Shapes, shortMarkerWithData] : [])]) {
      const onChain = await env.publicClient.readContract({
        address: entryPoint,
        abi: entryPointV07Abi,
        functionName: "getUserOpHash",
        args: [packUserOperation(op)],
      });
      assert.equal(getUserOpHashV07(op, entryPoint, env.chain.id, version), onChain, name);
    }
  });
}
