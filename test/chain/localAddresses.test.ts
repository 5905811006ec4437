import assert from "node:assert/strict";
import { test } from "node:test";
import { LOCAL_VERIFYING_PAYMASTER_ADDRESS as computedVerifying } from "../../src/chain/deployments";
import { LOCAL_TOKEN_PAYMASTER_ADDRESS, LOCAL_VERIFYING_PAYMASTER_ADDRESS } from "../../src/chain/localAddresses";
import { LOCAL_TOKEN_PAYMASTER_ADDRESS as computedToken } from "../../src/chain/tokenDeployment";

// The service's defaults for 31337 are written out so that a production install needs no bytecode; they must stay
// where the local chain actually deploys the contracts.
test("the written local paymaster addresses are the ones computed from the committed bytecode", () => {
  assert.equal(LOCAL_VERIFYING_PAYMASTER_ADDRESS, computedVerifying);
  assert.equal(LOCAL_TOKEN_PAYMASTER_ADDRESS, computedToken);
});
