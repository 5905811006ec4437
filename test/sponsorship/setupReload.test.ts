import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { parseAbi } from "viem";
import { type ContractAbi, parseContractAbi } from "../../src/sponsorship/contractAbi";
import { loadSponsorshipSetup } from "../../src/sponsorship/loadSetup";
import { ParsedAbis } from "../../src/sponsorship/parsedAbis";
import { SetupCache } from "../../src/sponsorship/setupCache";
import { deleteContract, findContract, updateWhitelistedMethods } from "../../src/storage/contracts";
import { setPolicyActive } from "../../src/storage/policies";
import { readSetupVersion } from "../../src/storage/sponsorshipSetup";
import { deleteWebhook, insertWebhook, setWebhookActive } from "../../src/storage/webhooks";
import { startTestApp, type TestApp } from "../helpers/app";
import { addPolicy, linkFundingWallet, whitelist } from "../helpers/dappSetup";

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

const TOKEN = "0x00000000000000000000000000000000000000aa";
const OTHER = "0xbb000000000000000000000000000000000000bb";
const tokenAbi = parseAbi(["function mint(uint256 amount)", "function burn(uint256 amount)"]);
const MINT = "0xa0712d68";
const BURN = "0x42966c68";

const limit = { type: "PAYMASTER", cycleDuration: { value: 1, unit: "day" }, threshold: 5, thresholdType: "COUNT" };

/** A parser that counts its calls, over the real one. */
function countingAbis() {
  const parsed: string[] = [];
  const abis = new ParsedAbis((text: string): ContractAbi => {
    parsed.push(text);
    return parseContractAbi(text);
  });
  return { abis, parsed };
}

test("every change of what the rules read bumps the paymaster's setup version, and only that paymaster's", async () => {
  const dapp = await t.dapp();
  const bystander = await t.dapp();
  const bystanderVersion = await readSetupVersion(t.db, bystander.apiKey);
  const versions = [await readSetupVersion(t.db, dapp.apiKey)];
  const expectBump = async (what: string) => {
    const now = await readSetupVersion(t.db, dapp.apiKey);
    assert.ok(now !== undefined && BigInt(now) > BigInt(versions.at(-1) as string), `${what} bumps the version`);
    versions.push(now);
  };
  await whitelist(t, dapp, TOKEN, tokenAbi, ["mint"]);
  await expectBump("whitelisting a contract");
  const contract = await findContract(t.db, dapp.paymasterId, TOKEN);
  assert.ok(contract);
  await updateWhitelistedMethods(t.db, contract.id, ["mint", "burn"]);
  await expectBump("changing the whitelisted methods");
  await deleteContract(t.db, dapp.paymasterId, TOKEN);
  await expectBump("removing a contract");
  const policyId = await addPolicy(t, dapp, "PAYMASTER_SA_LIMIT", limit);
  await expectBump("adding a policy");
  await setPolicyActive(t.db, dapp.paymasterId, policyId, false);
  await expectBump("pausing a policy");
  const webhook = await insertWebhook(t.db, {
    paymasterId: dapp.paymasterId,
    url: "http://127.0.0.1:1/hook",
    requestType: "POST",
  });
  await expectBump("adding a webhook");
  await setWebhookActive(t.db, dapp.paymasterId, webhook.id, false);
  await expectBump("pausing a webhook");
  await deleteWebhook(t.db, dapp.paymasterId, webhook.id);
  await expectBump("removing a webhook");
  await linkFundingWallet(t, dapp);
  await expectBump("linking a funding wallet");
  assert.equal(await readSetupVersion(t.db, bystander.apiKey), bystanderVersion);
  assert.equal(await readSetupVersion(t.db, "no-such-key"), undefined);
});

test("a reload parses no ABI again, yet sees a changed whitelist and a new contract", async () => {
  const dapp = await t.dapp();
  await whitelist(t, dapp, TOKEN, tokenAbi, ["mint"]);
  const { abis, parsed } = countingAbis();
  const first = await loadSponsorshipSetup(t.db, dapp.apiKey, abis);
  assert.deepEqual([...(first?.contracts.get(TOKEN) ?? [])], [MINT]);
  assert.equal(parsed.length, 1);

  const contract = await findContract(t.db, dapp.paymasterId, TOKEN);
  assert.ok(contract);
  await updateWhitelistedMethods(t.db, contract.id, ["mint", "burn"]);
  const second = await loadSponsorshipSetup(t.db, dapp.apiKey, abis);
  assert.deepEqual(new Set(second?.contracts.get(TOKEN)), new Set([MINT, BURN]), "the new whitelist applies");
  assert.equal(parsed.length, 1, "the unchanged ABI was not parsed again");

  await whitelist(t, dapp, OTHER, tokenAbi, ["burn"]);
  const third = await loadSponsorshipSetup(t.db, dapp.apiKey, abis);
  assert.deepEqual([...(third?.contracts.get(OTHER) ?? [])], [BURN]);
  assert.equal(parsed.length, 2, "only the new contract's ABI was parsed");
});

test("after the TTL the cache keeps an unchanged setup and reloads a changed one, written by another instance", async () => {
  const dapp = await t.dapp();
  await whitelist(t, dapp, TOKEN, tokenAbi, ["mint"]);
  const { abis, parsed } = countingAbis();
  let loads = 0;
  let checks = 0;
  // As the service builds it, over the same database; no write below goes through this cache's invalidate, as a
  // write through another instance would not.
  const cache = new SetupCache(
    (apiKey) => {
      loads++;
      return loadSponsorshipSetup(t.db, apiKey, abis);
    },
    1000,
    undefined,
    (apiKey) => {
      checks++;
      return readSetupVersion(t.db, apiKey);
    },
  );
  const first = await cache.get(dapp.apiKey, 0);
  assert.ok(first);
  assert.equal(await cache.get(dapp.apiKey, 500), first, "within the TTL: no query at all");
  assert.equal(checks, 0);
  assert.equal(await cache.get(dapp.apiKey, 1500), first, "after the TTL, unchanged: the same setup");
  assert.equal(await cache.get(dapp.apiKey, 3000), first);
  assert.deepEqual([loads, checks, parsed.length], [1, 2, 1], "one load, two version checks, one parse");

  const contract = await findContract(t.db, dapp.paymasterId, TOKEN);
  assert.ok(contract);
  await updateWhitelistedMethods(t.db, contract.id, ["burn"]);
  assert.equal(await cache.get(dapp.apiKey, 3500), first, "within the TTL the change is not seen yet");
  const changed = await cache.get(dapp.apiKey, 4500);
  assert.notEqual(changed, first);
  assert.deepEqual([...(changed?.contracts.get(TOKEN) ?? [])], [BURN], "the change is seen after the TTL");
  assert.deepEqual([loads, parsed.length], [2, 1], "reloaded once, the ABI not parsed again");

  await addPolicy(t, dapp, "PAYMASTER_SA_LIMIT", limit);
  const withPolicy = await cache.get(dapp.apiKey, 6000);
  assert.equal(withPolicy?.policies.length, 1, "a new policy is seen after the TTL");
  assert.equal(loads, 3);
});

test("an unknown apiKey stays unknown without a load after the TTL", async () => {
  let loads = 0;
  const cache = new SetupCache(
    (apiKey) => {
      loads++;
      return loadSponsorshipSetup(t.db, apiKey);
    },
    1000,
    undefined,
    (apiKey) => readSetupVersion(t.db, apiKey),
  );
  assert.equal(await cache.get("no-such-key", 0), undefined);
  assert.equal(await cache.get("no-such-key", 2000), undefined);
  assert.equal(loads, 1);
});
