import assert from "node:assert/strict";
import { test } from "node:test";
import { keccak256, size } from "viem";
import { ENTRY_POINT_V09_ADDRESS } from "../../src/bindings/entryPoints/entryPointV09";
import {
  ENTRY_POINT_V09_INIT_CODE_HASH,
  entryPointV09Stack,
  SIMPLE_7702_ACCOUNT_V09_ADDRESS,
  SIMPLE_ACCOUNT_FACTORY_V09_ADDRESS,
} from "../../src/devChain/entryPointV09Deployments";

// The init code is what identifies the v0.9.0 release: its runtime code differs per chain (EIP-712 immutables), and
// the npm rc.1 artifacts hash to something else (0xcd4869…), so a swapped file must fail here.
test("the EntryPoint v0.9 CREATE2 data is the v0.9.0 release's init code, landing at the canonical address", () => {
  const stack = entryPointV09Stack();
  assert.equal(keccak256(stack.entryPoint.initCode), ENTRY_POINT_V09_INIT_CODE_HASH);
  assert.equal(ENTRY_POINT_V09_INIT_CODE_HASH, "0x02025307db5c9d7eeccd47fb6367c13def38d851a60dc851df2089ab61d45068");
  assert.equal(size(stack.entryPoint.initCode), 24_855);
  assert.equal(stack.entryPoint.salt, "0x7702864008ddeab30aa67b7adc3d2653bc8d162714b1fe8fe4582df814f3bf61");
  assert.equal(stack.entryPoint.address, ENTRY_POINT_V09_ADDRESS);
  assert.equal(stack.simple7702Account.address, SIMPLE_7702_ACCOUNT_V09_ADDRESS);
  assert.equal(stack.simpleAccountFactory.address, SIMPLE_ACCOUNT_FACTORY_V09_ADDRESS);
});
