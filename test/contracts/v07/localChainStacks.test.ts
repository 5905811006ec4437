// The EntryPoint v0.7 and v0.8 stacks of the local chain, started as the service starts it, used the way a wallet would:
// permissionless 0.4.1 builds the account (at its default factory, which must be the one the local chain deployed) and
// signs the operation, the service's encoder and key sign paymasterAndData, and an anvil account sends handleOps as a
// bundler would. For v0.8 also an EOA delegated with EIP-7702 to Simple7702Account, its authorization in the handleOps
// transaction. test/e2e/altoV07.test.ts sends the same operations through the Alto bundler instead.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { toSimpleSmartAccount } from "permissionless/accounts";
import { type Address, concat, type SignedAuthorization } from "viem";
import type { SmartAccount } from "viem/account-abstraction";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { entryPointV07Abi } from "../../../src/bindings/entryPoints/entryPointV07";
import { LOCAL_ENTRY_POINT_STACKS } from "../../../src/chain/localAddresses";
import type { LaterEntryPointVersion } from "../../../src/config";
import { eip7702AccountV08 } from "../../helpers/eip7702AccountV08";
import { anvilKeys } from "../fixtures";
import {
  checkSponsored,
  confirm,
  type LocalStacks,
  type PrepareOptions,
  prepareSponsored,
  type SponsoredOutcome,
  startLocalStacks,
} from "./localStacks";

const bundler = privateKeyToAccount(anvilKeys.bundler).address;
let env: LocalStacks;

before(async () => {
  env = await startLocalStacks();
});
after(() => env?.stop());

/** One sponsored operation sent with handleOps from anvil's bundler account, the authorization (if any) beside it. */
async function runSponsored(
  version: LaterEntryPointVersion,
  account: SmartAccount,
  options: PrepareOptions = {},
): Promise<SponsoredOutcome & { transactionGas: bigint }> {
  const prepared = await prepareSponsored(env, version, account, options);
  const receipt = await confirm(
    env,
    env.wallet(anvilKeys.bundler).writeContract({
      address: env.chain.info.entryPoints[version].entryPoint,
      abi: entryPointV07Abi,
      functionName: "handleOps",
      args: [[prepared.packed], bundler],
      ...(options.authorization ? { authorizationList: [options.authorization] } : {}),
    }),
  );
  return { ...(await checkSponsored(env, version, prepared, receipt.logs)), transactionGas: receipt.gasUsed };
}

function report(t: { diagnostic(message: string): void }, outcome: SponsoredOutcome & { transactionGas: bigint }) {
  t.diagnostic(
    `handleOps gas ${outcome.transactionGas}, operation actualGasUsed ${outcome.actualGasUsed}, actualGasCost ` +
      `${outcome.actualGasCost} wei, dApp charged ${outcome.charge} wei`,
  );
}

for (const version of ["0.7", "0.8"] as const) {
  test(`EntryPoint v${version}: a permissionless SimpleAccount at the default factory runs a sponsored first operation`, async (t) => {
    const account = await toSimpleSmartAccount({
      client: env.publicClient,
      owner: privateKeyToAccount(generatePrivateKey()),
      entryPoint: { address: env.chain.info.entryPoints[version].entryPoint, version },
    });
    // permissionless found the factory the local chain deployed: the account deploys through initCode.
    const { factory } = await account.getFactoryArgs();
    assert.equal(factory, LOCAL_ENTRY_POINT_STACKS[version].simpleAccountFactory);
    assert.equal(await env.publicClient.getCode({ address: account.address }), undefined);
    report(t, await runSponsored(version, account));
    assert.ok(await env.publicClient.getCode({ address: account.address }), "the account was deployed");
  });
}

/** A fresh EOA as a Simple7702Account of EntryPoint v0.8, and its signed delegation (it has never sent anything). */
async function eip7702Account(): Promise<{ account: SmartAccount; authorization: SignedAuthorization }> {
  const { account, authorization } = await eip7702AccountV08(env);
  return { account, authorization };
}

async function assertDelegated(eoa: Address) {
  const implementation = LOCAL_ENTRY_POINT_STACKS["0.8"].simple7702Account as Address;
  assert.equal(
    await env.publicClient.getCode({ address: eoa }),
    concat(["0xef0100", implementation.toLowerCase() as Address]),
    "the EOA now delegates to Simple7702Account",
  );
  // It had no ether and still has none: the paymaster paid.
  assert.equal(await env.publicClient.getBalance({ address: eoa }), 0n);
}

test("EntryPoint v0.8: an EOA delegated to Simple7702Account in the same transaction runs a sponsored operation", async (t) => {
  const { account, authorization } = await eip7702Account();
  report(t, await runSponsored("0.8", account, { authorization }));
  await assertDelegated(account.address);
});

test("EntryPoint v0.8: the same with the 0x7702 initCode marker, which our paymaster's hash covers as two bytes", async (t) => {
  const { account, authorization } = await eip7702Account();
  report(t, await runSponsored("0.8", account, { authorization, eip7702Marker: true }));
  await assertDelegated(account.address);
});
