import assert from "node:assert/strict";
import { MANAGEMENT_PREFIX } from "../../src/app";

/**
 * Calls a management endpoint of a service running as its own process, asserts that it answered 200 and returns the
 * envelope's `data` (the tests that start the real service use this instead of `app.inject`).
 */
export async function managementCall<T = Record<string, string>>(
  base: string,
  method: string,
  route: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<T> {
  const response = await fetch(`${base}${MANAGEMENT_PREFIX}/${route}`, {
    method,
    headers: { ...headers, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await response.json()) as { data?: unknown };
  assert.equal(response.status, 200, `${method} ${route}: ${JSON.stringify(json)}`);
  return (json.data ?? {}) as T;
}

/** The n-th test sender: a distinct, valid address for every n ≥ 0. */
export const testSender = (n: number) => `0x${(n + 1).toString(16).padStart(40, "0")}`;

/**
 * Posts `pm_sponsorUserOperation` in SPONSORED mode for an operation that carries all its gas values and calls
 * nothing, so that only the paymaster's rules and limits decide.
 */
export function postSponsorship(
  base: string,
  apiKey: string,
  operation: { sender: string; nonce?: number; id?: number },
): Promise<Response> {
  return fetch(`${base}/api/v1/31337/${apiKey}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: operation.id ?? 1,
      method: "pm_sponsorUserOperation",
      params: [
        {
          sender: operation.sender,
          nonce: operation.nonce ?? 0,
          initCode: "0x",
          callData: "0x",
          callGasLimit: 100000,
          verificationGasLimit: 100000,
          preVerificationGas: 50000,
          maxFeePerGas: 1000000000,
          maxPriorityFeePerGas: 1000000,
        },
        { mode: "SPONSORED" },
      ],
    }),
  });
}
