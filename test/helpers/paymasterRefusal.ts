// How our paymaster's refusal reaches a wallet that sends through viem's bundler client: sendUserOperation rejects
// with a viem BaseError whose causes hold the JSON-RPC error, and that error came from the paymaster's URL, not the
// bundler's. The e2e files that check a refusal read it this one way.
import assert from "node:assert/strict";
import { BaseError, RpcRequestError } from "viem";
import type { Sent } from "./altoStack";

/**
 * Waits for `sending` to fail and checks that the paymaster at `endpoint` refused it with `code` and a message holding
 * `reason`; returns the error for further checks.
 */
export async function paymasterRefusal(
  sending: Promise<unknown>,
  endpoint: string,
  code: number,
  reason: string,
): Promise<BaseError> {
  const refusal = await sending.then(
    () => assert.fail(`the operation went through, though the paymaster should refuse it: ${reason}`),
    (error: unknown) => error,
  );
  assert.ok(refusal instanceof BaseError, String(refusal));
  const rpcError = refusal.walk((cause) => cause instanceof RpcRequestError);
  assert.ok(rpcError instanceof RpcRequestError, refusal.message);
  assert.equal(rpcError.code, code);
  assert.equal(rpcError.url, endpoint, "the error is the paymaster's, not the bundler's");
  assert.ok(refusal.message.includes(reason), refusal.message);
  return refusal;
}

/**
 * The refusal of a call to `stranger`, a contract the dApp did not whitelist, given at pm_getPaymasterStubData: the
 * rules that spend nothing run there, so `sent` holds the stub request alone and the bundler never estimated it.
 */
export async function notWhitelistedAtStub(sending: Promise<unknown>, endpoint: string, sent: Sent, stranger: string) {
  await paymasterRefusal(
    sending,
    endpoint,
    -32003,
    `Not sponsored: Smart contract data not found: ${stranger} is not a whitelisted contract`,
  );
  assert.deepEqual(
    sent.map((request) => request.method),
    ["pm_getPaymasterStubData"],
  );
}
