// The arithmetic that turns an L1 fee reading into gas of the operation: OP stack's division by the operation's own
// price (min(maxFeePerGas, baseFee + tip)) with the margin, rounded up, the operator fee on the gas the bundle may use;
// Arbitrum's margin over gas already in L2 units.
import assert from "node:assert/strict";
import { test } from "node:test";
import { operatorFeeOf } from "../../src/chain/l1DataFee";
import { OperationRevertedError } from "../../src/gasEstimation/gasEstimationErrors";
import { l1DataGasOf } from "../../src/gasEstimation/l1DataGas";

const op = {
  model: "op-stack",
  oracle: "0x420000000000000000000000000000000000000f",
  marginPercent: 25,
  source: "chain id",
} as const;
const arb = {
  model: "arbitrum",
  oracle: "0x00000000000000000000000000000000000000c8",
  marginPercent: 20,
  source: "chain id",
} as const;
const noOperatorFee = { constantWei: 0n, perMillionGasWei: 0n };

test("OP stack: the fee over the operation's price, plus the margin, rounded up", () => {
  const reading = {
    model: "op-stack" as const,
    l1FeeWei: 1_000_000_000_000n,
    operatorFee: noOperatorFee,
    baseFeePerGas: 1_000_000n,
  };
  // Price: min(maxFee 10^7, base 10^6 + tip 10^6) = 2·10^6 wei. 10^12 / 2·10^6 = 500,000 gas; +25 % = 625,000.
  assert.equal(l1DataGasOf(op, reading, { maxFeePerGas: 10_000_000n, maxPriorityFeePerGas: 1_000_000n }, 0n), 625_000n);
  // maxFeePerGas below base + tip caps the price: 1.5·10^6 → 666,666.67 → ×1.25 = 833,333.33, rounded up.
  assert.equal(l1DataGasOf(op, reading, { maxFeePerGas: 1_500_000n, maxPriorityFeePerGas: 1_000_000n }, 0n), 833_334n);
  // No margin: exactly the fee over the price, rounded up (one wei more needs one more gas).
  const bare = { ...op, marginPercent: 0 };
  assert.equal(
    l1DataGasOf(bare, { ...reading, l1FeeWei: 2_000_001n }, { maxFeePerGas: 2n, maxPriorityFeePerGas: 0n }, 0n),
    1_000_001n,
  );
  // The figure the EntryPoint repays at that price always covers the fee.
  for (const fee of [1n, 999n, 123_456_789_012n]) {
    const fees = { maxFeePerGas: 7_777n, maxPriorityFeePerGas: 5n };
    const gas = l1DataGasOf(bare, { ...reading, l1FeeWei: fee, baseFeePerGas: 3_000n }, fees, 0n);
    assert.ok(gas * 3_005n >= fee && (gas - 1n) * 3_005n < fee, `${fee} wei → ${gas} gas`);
  }
});

test("OP stack: the operator fee is charged on the gas the bundle may use, linear in it", () => {
  const operatorFee = { constantWei: 1_000n, perMillionGasWei: 2_000_000n };
  assert.equal(operatorFeeOf(operatorFee, 0n), 1_000n);
  assert.equal(operatorFeeOf(operatorFee, 1_000_000n), 2_001_000n);
  assert.equal(operatorFeeOf(operatorFee, 1n), 1_002n, "2 wei a gas, plus the constant");
  assert.equal(operatorFeeOf({ constantWei: 0n, perMillionGasWei: 1n }, 1n), 1n, "a fraction of a wei is rounded up");
  const reading = { model: "op-stack" as const, l1FeeWei: 0n, operatorFee, baseFeePerGas: 0n };
  const bare = { ...op, marginPercent: 0 };
  // 500,000 gas: 1,000,000 + 1,000 wei at 1 wei a gas.
  assert.equal(l1DataGasOf(bare, reading, { maxFeePerGas: 1n, maxPriorityFeePerGas: 1n }, 500_000n), 1_001_000n);
});

test("OP stack: an operation priced at zero cannot repay a fee, and is refused rather than signed short", () => {
  const reading = { model: "op-stack" as const, l1FeeWei: 10n, operatorFee: noOperatorFee, baseFeePerGas: 0n };
  assert.throws(
    () => l1DataGasOf(op, reading, { maxFeePerGas: 0n, maxPriorityFeePerGas: 0n }, 0n),
    (error: unknown) => error instanceof OperationRevertedError && /gas price is 0.*10 wei/.test(error.message),
  );
  assert.equal(l1DataGasOf(op, { ...reading, l1FeeWei: 0n }, { maxFeePerGas: 0n, maxPriorityFeePerGas: 0n }, 0n), 0n);
});

test("Arbitrum: gasEstimateForL1 plus the margin, rounded up, whatever the fees", () => {
  const reading = { model: "arbitrum" as const, gasForL1: 40_001n };
  assert.equal(l1DataGasOf(arb, reading, { maxFeePerGas: 1n, maxPriorityFeePerGas: 0n }, 0n), 48_002n);
  assert.equal(l1DataGasOf(arb, reading, { maxFeePerGas: 10n ** 12n, maxPriorityFeePerGas: 0n }, 9n), 48_002n);
  assert.equal(
    l1DataGasOf({ ...arb, marginPercent: 0 }, reading, { maxFeePerGas: 1n, maxPriorityFeePerGas: 0n }, 0n),
    40_001n,
  );
});
