import assert from "node:assert/strict";
import { test } from "node:test";
import { createPublicClient, http } from "viem";
import { isAlive } from "../../src/storage/processIdentity";
import { AnvilStartError, startAnvil } from "../helpers/anvil";

test("anvil starts on a free port with the chain id asked for, and stop() ends the process", async (t) => {
  const [first, second] = await Promise.all([startAnvil(), startAnvil({ chainId: 4337 })]);
  t.after(() => Promise.all([first.stop(), second.stop()]));
  assert.notEqual(first.rpcUrl, second.rpcUrl);
  const chainIdOf = (rpcUrl: string) => createPublicClient({ transport: http(rpcUrl) }).getChainId();
  assert.equal(await chainIdOf(first.rpcUrl), 31337);
  assert.equal(await chainIdOf(second.rpcUrl), 4337);

  assert.ok(isAlive(first.pid));
  await first.stop();
  await first.stop(); // a second stop is harmless
  assert.equal(isAlive(first.pid), false);
  await assert.rejects(chainIdOf(first.rpcUrl));
  assert.equal(await chainIdOf(second.rpcUrl), 4337);
});

test("a start that takes too long fails with a clear error and leaves no process", async () => {
  const error = await startAnvil({ startTimeoutMs: 1 }).then(
    () => assert.fail("anvil cannot report its port within 1 ms"),
    (e: unknown) => e,
  );
  assert.ok(error instanceof AnvilStartError);
  assert.match(error.message, /anvil did not start: no "Listening on" line within 1 ms/);
  assert.ok(error.pid !== undefined);
  assert.equal(isAlive(error.pid), false);
});
