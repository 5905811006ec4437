// Every test of a file that shares one anvil starts from the chain as the file's `before` left it: a snapshot is taken
// before each test and reverted to after it. So no test sees another's deposits or transactions, and the contracts
// are still deployed once per file. The contract and L2 tests all did this with the same two hooks.
import { afterEach, beforeEach } from "node:test";
import type { Hex, TestClient } from "viem";

/** `testClient` is read when the hooks run, after `before` has started the chain. */
export function revertEachTest(testClient: () => TestClient): void {
  let snapshot: Hex;
  beforeEach(async () => {
    snapshot = await testClient().snapshot();
  });
  afterEach(async () => {
    await testClient().revert({ id: snapshot });
  });
}
