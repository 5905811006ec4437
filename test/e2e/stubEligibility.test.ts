// Eligibility at the stub, end to end: the service's local chain, Alto bundling EntryPoint v0.7, and viem's
// createBundlerClient with createPaymasterClient doing the ERC-7677 flow for a permissionless SimpleAccount. An
// operation the service can never sponsor is refused at pm_getPaymasterStubData, before the bundler estimates anything
// and before the user would sign: (a) a paused paymaster, (b) an operation whose gas, as the wallet sends it, already
// costs more than the dApp's per-operation cap, (c) a sender on the dApp's blocklist. The reason reaches the caller in the error viem throws. An operation
// within the cap goes on to be sponsored and mined, so the stub refuses nothing the final request would accept.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { toSimpleSmartAccount } from "permissionless/accounts";
import { BaseError, parseEther, parseGwei, RpcRequestError } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { listSponsorships } from "../../src/storage/sponsorships";
import { anvilKeys } from "../contracts/fixtures";
import { bundlerFor, type Sent } from "../helpers/altoStack";
import { altoStackFile } from "../helpers/altoStackFile";
import type { Dapp } from "../helpers/app";
import { TARGET } from "../helpers/chainApp";
import { addPolicy, linkFundingWallet, whitelist } from "../helpers/dappSetup";

const { started } = altoStackFile({ entryPoints: ["0.7"], deposits: { versions: ["0.7"], value: parseEther("1") } });

/** A dApp paying from the funded wallet for deployments and calls to TARGET. */
async function shop(name: string): Promise<Dapp> {
  const { t } = started();
  const dapp = await t.dapp({ name });
  await linkFundingWallet(t, dapp, anvilKeys.fundingWallet);
  await addPolicy(t, dapp, "WALLET_DEPLOYMENT", {});
  await whitelist(t, dapp, TARGET, [], []);
  return dapp;
}

/**
 * A new SimpleAccount 0.7 and a bundler client whose paymaster is the dApp's endpoint; `methods()`: the methods it
 * sent us so far.
 */
async function wallet(dapp: Dapp) {
  const { env } = started();
  const endpoint = started().endpoint(dapp);
  const sent: Sent = [];
  const account = await toSimpleSmartAccount({
    client: env.publicClient,
    owner: privateKeyToAccount(generatePrivateKey()),
    entryPoint: { address: env.chain.info.entryPoints["0.7"].entryPoint, version: "0.7" },
  });
  const bundler = bundlerFor(started(), endpoint, account, sent);
  return { bundler, account, endpoint, methods: () => sent.map((request) => request.method) };
}

/** The error viem threw, checked to be our endpoint's -32003 carrying `reason`. */
function refusedWith(error: unknown, endpoint: string, reason: string) {
  assert.ok(error instanceof BaseError, String(error));
  const rpcError = error.walk((cause) => cause instanceof RpcRequestError);
  assert.ok(rpcError instanceof RpcRequestError, error.message);
  assert.equal(rpcError.code, -32003);
  assert.equal(rpcError.url, endpoint, "the error is the paymaster's, not the bundler's");
  assert.ok(error.message.includes(reason), `${error.message}\ndoes not carry: ${reason}`);
}

const fails = (promise: Promise<unknown>) =>
  promise.then(
    () => assert.fail("the operation was sponsored"),
    (error: unknown) => error,
  );

describe("EntryPoint v0.7 through Alto: refused at pm_getPaymasterStubData, the reason reaching the client", () => {
  test("(a) a paused paymaster", async () => {
    const dapp = await shop("paused shop");
    const paused = await started().t.call("PATCH", "paymasterParameters", {
      token: dapp.token,
      apiKey: dapp.apiKey,
      body: { paymasterId: dapp.paymasterId, type: "active", active: false },
    });
    assert.equal(paused.status, 200, JSON.stringify(paused.body));
    const { bundler, account, endpoint, methods } = await wallet(dapp);

    const error = await fails(bundler.sendUserOperation({ calls: [{ to: TARGET, value: 0n }] }));
    refusedWith(error, endpoint, `Paymaster "paused shop" (${dapp.paymasterId}) is paused`);
    assert.deepEqual(methods(), ["pm_getPaymasterStubData"], "refused at the stub: the bundler never estimated it");
    assert.equal(await started().env.publicClient.getCode({ address: account.address }), undefined);
    assert.deepEqual(await listSponsorships(started().t.db, dapp.paymasterId), []);
  });

  test("(b) an operation whose gas, as sent, is over the cap; one within it is sponsored and mined", async () => {
    const dapp = await shop("capped shop");
    const policy = { threshold: 0.005, thresholdType: "NATIVE_ASSET" };
    await addPolicy(started().t, dapp, "MAX_COST_PER_OP", policy, "per op");
    const over = await wallet(dapp);
    // 10,000,000 gas for the call alone at 2 gwei: 0.02 ETH at the very least, whatever the bundler estimates after.
    const error = await fails(
      over.bundler.sendUserOperation({
        calls: [{ to: TARGET, value: 0n }],
        callGasLimit: 10_000_000n,
        maxFeePerGas: parseGwei("2"),
        maxPriorityFeePerGas: parseGwei("1"),
      }),
    );
    refusedWith(error, over.endpoint, 'Not sponsored: Cost cap "per op" exceeded: this operation may cost up to 0.02');
    assert.deepEqual(over.methods(), ["pm_getPaymasterStubData"]);
    assert.deepEqual(await listSponsorships(started().t.db, dapp.paymasterId), []);

    const within = await wallet(dapp);
    const hash = await within.bundler.sendUserOperation({ calls: [{ to: TARGET, value: 0n }] });
    const receipt = await within.bundler.waitForUserOperationReceipt({ hash, timeout: 30_000 });
    assert.equal(receipt.success, true);
    assert.deepEqual(within.methods(), ["pm_getPaymasterStubData", "pm_getPaymasterData"]);
  });

  test("(c) a blocked sender", async () => {
    const dapp = await shop("guarded shop");
    const blocked = await wallet(dapp);
    const sender = blocked.account.address.toLowerCase();
    await addPolicy(started().t, dapp, "SENDER_BLOCKLIST", { addresses: [sender] }, "abusers");

    const error = await fails(blocked.bundler.sendUserOperation({ calls: [{ to: TARGET, value: 0n }] }));
    refusedWith(error, blocked.endpoint, `Not sponsored: Sender ${sender} is on the blocklist "abusers"`);
    assert.deepEqual(blocked.methods(), ["pm_getPaymasterStubData"]);
    assert.deepEqual(await listSponsorships(started().t.db, dapp.paymasterId), []);
  });
});
