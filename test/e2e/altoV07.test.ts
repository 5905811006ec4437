// Alto 0.0.20 bundles sponsored operations for the local chain's EntryPoint v0.7 and v0.8: the operations of
// test/contracts/v07/localChainStacks.test.ts (permissionless accounts, paymasterAndData signed with the service's key)
// go in through eth_sendUserOperation on Alto's v2 API, the stricter one hosted bundlers serve, and come out as
// successful operations paid by our paymasters and charged to the dApp.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { toSimpleSmartAccount } from "permissionless/accounts";
import { http } from "viem";
import {
  type BundlerClient,
  createBundlerClient,
  formatUserOperationRequest,
  type SmartAccount,
} from "viem/account-abstraction";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { ENTRY_POINT_V06_ADDRESS } from "../../src/bindings/entryPoints/entryPoint";
import type { LaterEntryPointVersion } from "../../src/config";
import { anvilKeys } from "../contracts/fixtures";
import {
  checkSponsored,
  type LocalStacks,
  type PrepareOptions,
  prepareSponsored,
  startLocalStacks,
} from "../contracts/v07/localStacks";
import { type Alto, startAlto } from "../helpers/alto";
import { eip7702AccountV08 } from "../helpers/eip7702AccountV08";

let env: LocalStacks;
let alto: Alto;
let bundler: BundlerClient;

before(async () => {
  env = await startLocalStacks();
  alto = await startAlto({
    rpcUrl: env.chain.rpcUrl,
    executorKey: anvilKeys.bundler,
    utilityKey: anvilKeys.stranger,
    apiVersions: ["v2"],
    entryPoints: [
      ENTRY_POINT_V06_ADDRESS,
      env.chain.info.entryPoints["0.7"].entryPoint,
      env.chain.info.entryPoints["0.8"].entryPoint,
    ],
  });
  bundler = createBundlerClient({ client: env.publicClient, transport: http(alto.url), pollingInterval: 50 });
});
after(async () => {
  await alto?.stop();
  await env?.stop();
});

async function throughAlto(
  t: { diagnostic(message: string): void },
  version: LaterEntryPointVersion,
  account: SmartAccount,
  options: PrepareOptions = {},
) {
  const prepared = await prepareSponsored(env, version, account, options);
  const entryPoint = env.chain.info.entryPoints[version].entryPoint;
  let hash: `0x${string}`;
  try {
    hash = await bundler.request({
      method: "eth_sendUserOperation",
      params: [formatUserOperationRequest(prepared.userOperation), entryPoint],
    });
  } catch (error) {
    assert.fail(`Alto refused the operation: ${(error as Error).message}\n--- Alto ---\n${alto.output()}`);
  }
  const receipt = await bundler.waitForUserOperationReceipt({ hash, timeout: 30_000 });
  assert.equal(receipt.success, true);
  const outcome = await checkSponsored(env, version, prepared, receipt.receipt.logs);
  t.diagnostic(
    `bundle gas ${receipt.receipt.gasUsed}, operation actualGasUsed ${outcome.actualGasUsed}, dApp charged ` +
      `${outcome.charge} wei`,
  );
}

for (const version of ["0.7", "0.8"] as const) {
  test(`EntryPoint v${version}: Alto bundles a sponsored first operation of a permissionless SimpleAccount`, async (t) => {
    const account = await toSimpleSmartAccount({
      client: env.publicClient,
      owner: privateKeyToAccount(generatePrivateKey()),
      entryPoint: { address: env.chain.info.entryPoints[version].entryPoint, version },
    });
    await throughAlto(t, version, account);
    assert.ok(await env.publicClient.getCode({ address: account.address }), "the account was deployed");
  });
}

for (const eip7702Marker of [false, true]) {
  const form = eip7702Marker ? "with the 0x7702 factory marker" : "with no factory";
  test(`EntryPoint v0.8: Alto bundles a sponsored operation of an EIP-7702 account, ${form}`, async (t) => {
    // eip7702Auth in the request: Alto puts it in the bundle transaction's authorization list.
    const { owner, account, implementation, authorization } = await eip7702AccountV08(env);
    await throughAlto(t, "0.8", account, { authorization, eip7702Marker });
    const code = await env.publicClient.getCode({ address: owner.address });
    assert.equal(code?.toLowerCase(), `0xef0100${implementation.slice(2).toLowerCase()}`);
  });
}
