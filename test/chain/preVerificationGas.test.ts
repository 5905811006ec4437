// preVerificationGas as the service signs it, against Alto's own rule: Alto's function (the one its v2 API applies at
// eth_sendUserOperation) is loaded from the installed @pimlico/alto and run on representative operations of ours, the
// 276-byte verifying layout and the 278-byte token layout, a first operation and a later one. Our figure must be at
// least what Alto requires (with and without its EIP-7623 floor) and at least the reference bundler's rule, and no
// more than the margin above the larger.
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import path from "node:path";
import { test } from "node:test";
import { pathToFileURL } from "node:url";
import { type Address, concat, encodeFunctionData, erc20Abi, type Hex, size } from "viem";
import type { UserOperation } from "../../src/bindings/entryPoints/userOperation";
import { TOKEN_PAYMASTER_AND_DATA_LENGTH } from "../../src/bindings/paymasters/tokenPaymasterAndData";
import { simpleAccountFactoryDeployment } from "../../src/devChain/deployments";
import { simpleAccountAbi, simpleAccountFactoryAbi } from "../../src/devChain/simpleAccount";
import {
  DUMMY_SIGNATURE,
  stubPaymasterAndData,
  stubTokenPaymasterAndData,
} from "../../src/gasEstimation/gasEstimationStub";
import {
  PRE_VERIFICATION_MARGIN_PERCENT,
  pimlicoPreVerificationGas,
  preVerificationGasFor,
  preVerificationGasFormula,
} from "../../src/gasEstimation/preVerificationGas";

type AltoPvg = (args: { userOp: UserOperation; supportsEip7623: boolean; config: Record<string, unknown> }) => bigint;

/** Alto's calcExecutionPvgComponent, from the compiled package (its exports do not name the file). */
async function altoRule(): Promise<AltoPvg> {
  const main = createRequire(import.meta.url).resolve("@pimlico/alto");
  const file = path.join(path.dirname(main), "rpc", "estimation", "preVerificationGasCalculator.js");
  const module = (await import(pathToFileURL(file).href)) as { calcExecutionPvgComponent: AltoPvg };
  return module.calcExecutionPvgComponent;
}

/** What Alto's v2 API requires of `op` (a chain without an L1 fee, Alto's default multipliers). */
function required(alto: AltoPvg, op: UserOperation, eip7623: boolean): bigint {
  return alto({
    userOp: op,
    supportsEip7623: eip7623,
    config: { v6CallGasLimitMultiplier: "100", v6VerificationGasLimitMultiplier: "100" },
  });
}

const owner: Address = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8";
const sender: Address = "0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc";
const target: Address = "0x90f79bf6eb2c4f870365e785982e1f101e93b906";
const token: Address = "0x15d34aaf54267db7d7c367839aaf71a00a2c6a65";
const paymaster: Address = "0x9965507d1a55bcc2695c58ba16fb37d819b0a4dc";
const now = 1_800_000_000;

const verifyingStub = stubPaymasterAndData({
  paymaster,
  paymasterId: "0x976ea74026e726554db657fa54763abd0c3a0aa9",
  validUntil: now + 600,
  validAfter: now - 60,
});
const tokenStub = stubTokenPaymasterAndData({
  paymaster,
  priceSource: 1,
  validUntil: now + 600,
  validAfter: now - 60,
  feeToken: token,
  oracleAggregator: "0x14dc79964da2c08b23698b3d3cc7ca32193d9955",
  exchangeRate: 3_000_000_000n,
  priceMarkup: 1_100_000,
});

const initCode = concat([
  simpleAccountFactoryDeployment.address,
  encodeFunctionData({ abi: simpleAccountFactoryAbi, functionName: "createAccount", args: [owner, 0n] }),
]);
const execute = encodeFunctionData({
  abi: simpleAccountAbi,
  functionName: "execute",
  args: [target, 0n, encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [owner, 10n ** 18n] })],
});
const approveAndCall = encodeFunctionData({
  abi: simpleAccountAbi,
  functionName: "executeBatch",
  args: [
    [token, target],
    [
      encodeFunctionData({ abi: erc20Abi, functionName: "approve", args: [paymaster, 1_234_567n] }),
      encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [owner, 1n] }),
    ],
  ],
});
/** An account of ERC-4337's IAccountExecute: Alto prices its callData by the operation's words. */
const executeUserOp: Hex = `0x8dd7712f${"00".repeat(31)}40${"ab".repeat(200)}`;

function operation(fields: Partial<UserOperation>): UserOperation {
  return {
    sender,
    nonce: 0n,
    initCode: "0x",
    callData: execute,
    callGasLimit: 61_234n,
    verificationGasLimit: 150_000n,
    preVerificationGas: 0n,
    maxFeePerGas: 3_000_000_000n,
    maxPriorityFeePerGas: 1_000_000_000n,
    paymasterAndData: verifyingStub,
    signature: DUMMY_SIGNATURE,
    ...fields,
  };
}

const representative: Record<string, UserOperation> = {
  "a first operation, verifying paymaster (276 bytes)": operation({ initCode, verificationGasLimit: 350_000n }),
  "a later operation, verifying paymaster": operation({ nonce: 7n }),
  "a first operation, token paymaster (278 bytes), approve and call": operation({
    initCode,
    callData: approveAndCall,
    paymasterAndData: tokenStub,
    verificationGasLimit: 360_000n,
  }),
  "a later operation, token paymaster, small limits": operation({
    nonce: 3n,
    paymasterAndData: tokenStub,
    callGasLimit: 12_000n,
    verificationGasLimit: 60_000n,
  }),
  "an executeUserOp call with a 130-byte signature": operation({
    callData: executeUserOp,
    signature: `0x${"1b".repeat(130)}`,
  }),
  "no paymaster at all, empty callData": operation({ callData: "0x", paymasterAndData: "0x" }),
};

test("the operations are of our layouts", () => {
  assert.equal(size(verifyingStub), 276);
  assert.equal(size(tokenStub), TOKEN_PAYMASTER_AND_DATA_LENGTH);
  assert.equal(TOKEN_PAYMASTER_AND_DATA_LENGTH, 278);
});

test("our copy of Alto's rule gives what Alto's own function gives, with and without the EIP-7623 floor", async () => {
  const alto = await altoRule();
  for (const [name, op] of Object.entries(representative)) {
    for (const eip7623 of [false, true]) {
      assert.equal(pimlicoPreVerificationGas(op, eip7623), required(alto, op, eip7623), `${name}, EIP-7623 ${eip7623}`);
    }
  }
});

test("the signed preVerificationGas passes Alto's v2 check and the reference rule, within the margin", async (t) => {
  const alto = await altoRule();
  for (const [name, op] of Object.entries(representative)) {
    const ours = preVerificationGasFor(op);
    const altoV2 = required(alto, op, false);
    const altoFloor = required(alto, op, true);
    // The reference rule over the operation as it will be signed: the real signatures' bytes, any of them non-zero.
    const reference = preVerificationGasFormula({ ...op, preVerificationGas: ours });
    for (const [rule, figure] of Object.entries({ altoV2, altoFloor, reference })) {
      assert.ok(ours >= figure, `${name}: ours ${ours} < ${rule} ${figure}`);
    }
    const larger = [altoV2, altoFloor, reference].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))[2] ?? 0n;
    assert.ok(ours <= larger + (larger * PRE_VERIFICATION_MARGIN_PERCENT) / 100n + 1n + 64n, `${name}: ${ours}`);
    t.diagnostic(`${name}: ours ${ours}, Alto v2 ${altoV2} (EIP-7623 ${altoFloor}), reference ${reference}`);
  }
});

test("paymasterAndData costs what Alto charges for it: twice its length in non-zero bytes", () => {
  const without = pimlicoPreVerificationGas(operation({ paymasterAndData: "0x" }), false);
  const withOurs = pimlicoPreVerificationGas(operation({}), false);
  // Even an empty one is priced as 2 non-zero bytes ("0x"), in a word of 30 zero bytes; ours as 554, in 18 words with
  // 22 zero bytes: 552 non-zero bytes more at 16 gas, 8 zero bytes less at 4.
  assert.equal(withOurs - without, 552n * 16n - 8n * 4n);
});
