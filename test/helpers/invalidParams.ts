import assert from "node:assert/strict";
import { INVALID_PARAMS, RpcError } from "../../src/errors";

/** Asserts that `run` throws an RpcError -32602 (HTTP 400) with exactly `message`. */
export function assertInvalidParams(run: () => unknown, message: string): void {
  assert.throws(run, (error: unknown) => {
    assert.ok(error instanceof RpcError, `an RpcError, not ${String(error)}`);
    assert.equal(error.code, INVALID_PARAMS);
    assert.equal(error.httpStatus, 400);
    assert.equal(error.message, message);
    return true;
  });
}
