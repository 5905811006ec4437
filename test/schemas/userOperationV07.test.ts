// The v0.7/v0.8 user operation schema the v0.7 methods read params[0] with: the shape viem and bundlers send is accepted, and a
// bad field is named the way the v0.6 operation's are.
import assert from "node:assert/strict";
import { test } from "node:test";
import { schemaCheck } from "../../src/rpc/schemaCheck";
import { PartialUserOperationV07, UserOperationV07 } from "../../src/schemas/rpc/userOperationV07";
import { assertInvalidParams } from "../helpers/invalidParams";

const partial = schemaCheck(PartialUserOperationV07);
const complete = schemaCheck(UserOperationV07);
const ADDRESS = "0x5FF137D4b0FDCD49DcA30c7CF57E578a026d2789";
const OP = {
  sender: ADDRESS,
  nonce: "0x0",
  factory: ADDRESS,
  factoryData: "0xabcd",
  callData: "0x",
  callGasLimit: "0x1",
  verificationGasLimit: "0x2",
  preVerificationGas: "0x3",
  maxFeePerGas: "0x4",
  maxPriorityFeePerGas: "0x5",
  paymaster: ADDRESS,
  paymasterVerificationGasLimit: "0x6",
  paymasterPostOpGasLimit: "0x7",
  paymasterData: "0x",
  signature: "0x",
};

test("a complete operation, with and without an EIP-7702 authorization, is accepted by both forms", () => {
  const eip7702Auth = { chainId: "0x1", address: ADDRESS, nonce: "0x0", yParity: "0x0", r: "0x1", s: "0x2" };
  for (const op of [OP, { ...OP, eip7702Auth }]) {
    assert.equal(complete.check(op), true);
    assert.equal(partial.check(op), true);
  }
});

test("the partial form leaves out what an estimate fills in; the complete one does not", () => {
  const { callGasLimit: _, paymaster: __, ...estimable } = OP;
  assert.equal(partial.check({ ...estimable, factory: null }), true);
  assert.equal(complete.check(estimable), false);
});

test("a bad field is named with its problem", () => {
  assertInvalidParams(
    () => partial.read({ ...OP, paymaster: "0x12" }, "params[0]"),
    "params[0].paymaster must be an address: 0x followed by 40 hex digits",
  );
  assertInvalidParams(
    () => partial.read({ ...OP, paymasterPostOpGasLimit: -1 }, "params[0]"),
    "params[0].paymasterPostOpGasLimit must be a non-negative integer as 0x hex, a decimal string or a number",
  );
  assertInvalidParams(() => partial.read({ nonce: "0x0" }, "params[0]"), "params[0].sender is required");
});

test("the factory is an address or the EIP-7702 marker 0x7702 as viem sends it, and nothing else", () => {
  assert.equal(partial.check({ ...OP, factory: "0x7702", factoryData: "0x" }), true);
  assertInvalidParams(
    () => partial.read({ ...OP, factory: "0x7703" }, "params[0]"),
    "params[0].factory must be an address (0x followed by 40 hex digits) or the EIP-7702 marker 0x7702",
  );
});
