// EntryPoint v0.9 reads validUntil/validAfter as block numbers when both have bit 47 set. The service signs unix
// seconds: the engine refuses to sign any window that sets that bit, so it is never set by accident.
import assert from "node:assert/strict";
import { test } from "node:test";
import { BLOCK_NUMBER_FLAG, requireSecondsWindow } from "../../src/sponsorship/entryPoints/entryPointV09";

test("bit 47 is 2^47, and seconds of any date this service can see stay below it", () => {
  assert.equal(BLOCK_NUMBER_FLAG, 0x800000000000);
  const year9999 = Date.UTC(9999, 11, 31) / 1000;
  assert.ok(year9999 < BLOCK_NUMBER_FLAG);
  const nowSeconds = Math.floor(Date.now() / 1000);
  assert.doesNotThrow(() =>
    requireSecondsWindow({ validUntil: nowSeconds + 100 * 365 * 86_400, validAfter: nowSeconds }),
  );
});

test("a window at or above bit 47, in either bound, is refused with the bound named", () => {
  assert.doesNotThrow(() => requireSecondsWindow({ validUntil: BLOCK_NUMBER_FLAG - 1, validAfter: 0 }));
  assert.throws(
    () => requireSecondsWindow({ validUntil: BLOCK_NUMBER_FLAG, validAfter: 0 }),
    /validUntil 140737488355328 sets bit 47, which EntryPoint v0\.9 reads as a block number/,
  );
  assert.throws(
    () => requireSecondsWindow({ validUntil: 2_000_000_000, validAfter: BLOCK_NUMBER_FLAG + 5 }),
    /validAfter 140737488355333 sets bit 47/,
  );
});
