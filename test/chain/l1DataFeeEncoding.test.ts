// What the L1 data fee is computed over, held to Alto's own functions loaded from the installed @pimlico/alto: the
// serialized handleOps transaction an OP-stack oracle or Arbitrum's NodeInterface is asked to price (Alto's
// getSerializedHandleOpsTx), for v0.6 and for the packed later versions; and the execution part of a later version's
// preVerificationGas (Alto's calcExecutionPvgComponent), which the L1 part is added to.
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import path from "node:path";
import { test } from "node:test";
import { pathToFileURL } from "node:url";
import { type Address, concat, encodeFunctionData, erc20Abi, type Hex, size } from "viem";
import type { UserOperation } from "../../src/bindings/entryPoints/userOperation";
import type { UserOperationV07 } from "../../src/bindings/entryPoints/userOperationV07";
import { encodeVerifyingPaymasterDataV07 } from "../../src/bindings/paymasters/paymasterAndDataV07";
import { simpleAccountAbi } from "../../src/devChain/simpleAccount";
import { DUMMY_SIGNATURE, stubPaymasterAndData } from "../../src/gasEstimation/gasEstimationStub";
import {
  handleOpsCalldata,
  incompressibleBytes,
  serializedHandleOps,
  withRealisticSignatures,
} from "../../src/gasEstimation/handleOpsTransaction";
import { PRE_VERIFICATION_MARGIN_PERCENT } from "../../src/gasEstimation/preVerificationGas";
import { pimlicoPreVerificationGasV07, preVerificationGasForV07 } from "../../src/gasEstimation/preVerificationGasV07";

interface AltoCalculator {
  getSerializedHandleOpsTx(args: {
    userOps: unknown[];
    entryPoint: Address;
    chainId: number;
    removeZeros?: boolean;
    randomizeSignature?: boolean;
  }): Hex;
  calcExecutionPvgComponent(args: {
    userOp: unknown;
    supportsEip7623: boolean;
    config: Record<string, unknown>;
  }): bigint;
}

async function alto(): Promise<AltoCalculator> {
  const main = createRequire(import.meta.url).resolve("@pimlico/alto");
  const file = path.join(path.dirname(main), "rpc", "estimation", "preVerificationGasCalculator.js");
  return (await import(pathToFileURL(file).href)) as AltoCalculator;
}

const entryPointV06: Address = "0x5FF137D4b0FDCD49DcA30c7CF57E578a026d2789";
const entryPointV07: Address = "0x0000000071727De22E5E9d8BAf0edAc6f37da032";
const sender: Address = "0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc";
const paymaster: Address = "0x9965507d1a55bcc2695c58ba16fb37d819b0a4dc";
const factory: Address = "0x91e60e0613810449d098b0b5ec8b51a0fe8c8985";
const now = 1_800_000_000;
const window = {
  paymasterId: "0x976ea74026e726554db657fa54763abd0c3a0aa9" as Address,
  validUntil: now + 600,
  validAfter: now - 60,
};

const execute = encodeFunctionData({
  abi: simpleAccountAbi,
  functionName: "execute",
  args: [
    "0x90f79bf6eb2c4f870365e785982e1f101e93b906",
    0n,
    encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [sender, 10n ** 18n] }),
  ],
});
const factoryData: Hex = `0x5fbfb9cf${"00".repeat(12)}${"70997970c51812dc3a010c7d01b50e0d17dc79c8"}${"00".repeat(32)}`;

const v06: UserOperation = {
  sender,
  nonce: 0n,
  initCode: concat([factory, factoryData]),
  callData: execute,
  callGasLimit: 61_234n,
  verificationGasLimit: 350_000n,
  preVerificationGas: 61_000n,
  maxFeePerGas: 3_000_000_000n,
  maxPriorityFeePerGas: 1_000_000_000n,
  paymasterAndData: stubPaymasterAndData({ paymaster, ...window }),
  signature: DUMMY_SIGNATURE,
};

const v07: UserOperationV07 = {
  sender,
  nonce: 0n,
  factory,
  factoryData,
  callData: execute,
  callGasLimit: 61_234n,
  verificationGasLimit: 350_000n,
  preVerificationGas: 61_000n,
  maxFeePerGas: 3_000_000_000n,
  maxPriorityFeePerGas: 1_000_000_000n,
  paymaster,
  paymasterVerificationGasLimit: 36_000n,
  paymasterPostOpGasLimit: 6_000n,
  paymasterData: encodeVerifyingPaymasterDataV07({ ...window, signature: DUMMY_SIGNATURE }),
  signature: DUMMY_SIGNATURE,
};

/** Alto's shape of a later version's operation: every optional field present, null where absent. */
function altoV07(op: UserOperationV07): Record<string, unknown> {
  return {
    factory: null,
    factoryData: null,
    paymaster: null,
    paymasterData: null,
    paymasterVerificationGasLimit: null,
    paymasterPostOpGasLimit: null,
    ...op,
  };
}

test("the transaction priced is Alto's, byte for byte: v0.6 and a later version, first and later operations", async () => {
  const { getSerializedHandleOpsTx } = await alto();
  const cases: [string, UserOperation | UserOperationV07, Address, unknown][] = [
    ["v0.6 first operation", v06, entryPointV06, v06],
    [
      "v0.6 later operation",
      { ...v06, nonce: 5n, initCode: "0x" },
      entryPointV06,
      { ...v06, nonce: 5n, initCode: "0x" },
    ],
    ["v0.7 first operation", v07, entryPointV07, altoV07(v07)],
  ];
  const { factory: _, factoryData: __, ...later } = v07;
  cases.push(["v0.7 later operation", { ...later, nonce: 9n }, entryPointV07, altoV07({ ...later, nonce: 9n })]);
  for (const chainId of [8453, 42161]) {
    for (const [name, ours, entryPoint, theirs] of cases) {
      const expected = getSerializedHandleOpsTx({ userOps: [theirs], entryPoint, chainId, removeZeros: false });
      assert.equal(serializedHandleOps(chainId, entryPoint, handleOpsCalldata(ours, entryPoint)), expected, name);
    }
  }
});

test("signatures priced as real ones: incompressible, of the same length, the same every time", () => {
  const priced = withRealisticSignatures(v07, DUMMY_SIGNATURE);
  assert.equal(size(priced.signature), 65);
  assert.notEqual(priced.signature, DUMMY_SIGNATURE);
  assert.equal(size(priced.paymasterData ?? "0x"), size(v07.paymasterData ?? "0x"));
  assert.ok(!(priced.paymasterData ?? "").includes(DUMMY_SIGNATURE.slice(2)), "our dummy signature is replaced");
  assert.deepEqual(withRealisticSignatures(v07, DUMMY_SIGNATURE), priced, "deterministic");
  // A longer account signature (a validator's address first) keeps its prefix; only its last 65 bytes change.
  const long = withRealisticSignatures(
    { ...v06, signature: `0x${"ab".repeat(20)}${DUMMY_SIGNATURE.slice(2)}` },
    DUMMY_SIGNATURE,
  );
  assert.equal(long.signature.slice(0, 42), `0x${"ab".repeat(20)}`);
  assert.equal(size(long.signature), 85);
  assert.equal(size(long.paymasterAndData), size(v06.paymasterAndData));
  // Random-looking: no byte value takes more than a small share (a repeated stand-in compresses to almost nothing).
  const bytes = incompressibleBytes("0x01", 4096).slice(2).match(/../g) ?? [];
  const counts = new Map<string, number>();
  for (const byte of bytes) counts.set(byte, (counts.get(byte) ?? 0) + 1);
  assert.ok(Math.max(...counts.values()) < 40, "no byte dominates");
});

test("a later version's preVerificationGas: our copy of Alto's rule equals Alto's, and what we sign covers it", async () => {
  const { calcExecutionPvgComponent } = await alto();
  const config = { v7CallGasLimitMultiplier: "100", v7PaymasterPostOpGasLimitMultiplier: "100" };
  const { factory: _, factoryData: __, ...later } = v07;
  const cases: Record<string, UserOperationV07> = {
    "first operation": v07,
    "later operation": { ...later, nonce: 3n },
    "no paymaster": {
      ...later,
      paymaster: undefined,
      paymasterData: undefined,
      paymasterVerificationGasLimit: undefined,
      paymasterPostOpGasLimit: undefined,
    },
    "executeUserOp call": { ...later, callData: `0x8dd7712f${"00".repeat(31)}40${"ab".repeat(200)}` },
  };
  for (const [name, op] of Object.entries(cases)) {
    for (const eip7623 of [false, true]) {
      const theirs = calcExecutionPvgComponent({ userOp: altoV07(op), supportsEip7623: eip7623, config });
      assert.equal(pimlicoPreVerificationGasV07(op, eip7623), theirs, `${name}, EIP-7623 ${eip7623}`);
    }
    const ours = preVerificationGasForV07(op);
    const altoFloor = calcExecutionPvgComponent({ userOp: altoV07(op), supportsEip7623: true, config });
    const altoV2 = calcExecutionPvgComponent({ userOp: altoV07(op), supportsEip7623: false, config });
    const required = [altoFloor, altoV2].sort((a, b) => (a < b ? 1 : a > b ? -1 : 0))[0] ?? 0n;
    assert.ok(ours >= required, `${name}: ours ${ours} covers Alto's ${required}`);
    assert.ok(ours <= required * 2n, `${name}: ours ${ours} is not far above Alto's ${required}`);
  }
  // The margin is the same as v0.6's.
  assert.equal(PRE_VERIFICATION_MARGIN_PERCENT, 10n);
});
