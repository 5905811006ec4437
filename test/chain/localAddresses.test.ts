import assert from "node:assert/strict";
import { test } from "node:test";
import {
  LOCAL_ENTRY_POINT_STACKS,
  LOCAL_TOKEN_PAYMASTER_ADDRESS,
  LOCAL_VERIFYING_PAYMASTER_ADDRESS,
} from "../../src/chain/localAddresses";
import {
  LOCAL_VERIFYING_PAYMASTER_ADDRESS as computedVerifying,
  localPermitTokenPaymasterV07Deployments,
  localTokenPaymasterV07Deployments,
  localVerifyingPaymasterV07Deployments,
} from "../../src/devChain/deployments";
import { entryPointStack, simple7702AccountDeployment } from "../../src/devChain/entryPointV07Deployments";
import { entryPointV09Stack } from "../../src/devChain/entryPointV09Deployments";
import {
  localPermitTokenPaymasterV09Deployment,
  localTokenPaymasterV09Deployment,
  localVerifyingPaymasterV09Deployment,
} from "../../src/devChain/paymasterDeploymentsV09";
import { LOCAL_TOKEN_PAYMASTER_ADDRESS as computedToken } from "../../src/devChain/tokenDeployment";

// The service's defaults for 31337 are written out so that a production install needs no bytecode; they must stay
// where the local chain actually deploys the contracts.
test("the written local paymaster addresses are the ones computed from the committed bytecode", () => {
  assert.equal(LOCAL_VERIFYING_PAYMASTER_ADDRESS, computedVerifying);
  assert.equal(LOCAL_TOKEN_PAYMASTER_ADDRESS, computedToken);
});

test("the written EntryPoint v0.7 and v0.8 stacks are where the local chain's CREATE2 deployments land", () => {
  for (const version of ["0.7", "0.8"] as const) {
    const stack = entryPointStack(version);
    const written = LOCAL_ENTRY_POINT_STACKS[version];
    assert.equal(written.entryPoint, stack.entryPoint.address, `EntryPoint v${version}`);
    assert.equal(written.simpleAccountFactory, stack.simpleAccountFactory.address, `factory v${version}`);
    assert.equal(
      written.verifyingPaymaster,
      localVerifyingPaymasterV07Deployments[version].address,
      `paymaster v${version}`,
    );
    assert.equal(
      written.tokenPaymaster,
      localTokenPaymasterV07Deployments[version].address,
      `token paymaster v${version}`,
    );
    assert.equal(
      written.permitTokenPaymaster,
      localPermitTokenPaymasterV07Deployments[version].address,
      `permit token paymaster v${version}`,
    );
  }
  assert.equal(LOCAL_ENTRY_POINT_STACKS["0.8"].simple7702Account, simple7702AccountDeployment().address);
  assert.equal(LOCAL_ENTRY_POINT_STACKS["0.7"].simple7702Account, undefined);
  const v09 = entryPointV09Stack();
  assert.deepEqual(LOCAL_ENTRY_POINT_STACKS["0.9"], {
    entryPoint: v09.entryPoint.address,
    simpleAccountFactory: v09.simpleAccountFactory.address,
    verifyingPaymaster: localVerifyingPaymasterV09Deployment.address,
    tokenPaymaster: localTokenPaymasterV09Deployment.address,
    permitTokenPaymaster: localPermitTokenPaymasterV09Deployment.address,
    simple7702Account: v09.simple7702Account.address,
  });
  // One paymaster of each kind per EntryPoint: no two share an address (nor with the v0.6 ones).
  const paymasters = new Set([
    LOCAL_VERIFYING_PAYMASTER_ADDRESS,
    LOCAL_TOKEN_PAYMASTER_ADDRESS,
    LOCAL_ENTRY_POINT_STACKS["0.7"].verifyingPaymaster,
    LOCAL_ENTRY_POINT_STACKS["0.8"].verifyingPaymaster,
    LOCAL_ENTRY_POINT_STACKS["0.7"].tokenPaymaster,
    LOCAL_ENTRY_POINT_STACKS["0.8"].tokenPaymaster,
    LOCAL_ENTRY_POINT_STACKS["0.9"].verifyingPaymaster,
    LOCAL_ENTRY_POINT_STACKS["0.9"].tokenPaymaster,
    ...(["0.7", "0.8", "0.9"] as const).map((version) => LOCAL_ENTRY_POINT_STACKS[version].permitTokenPaymaster),
  ]);
  assert.equal(paymasters.size, 11);
});
