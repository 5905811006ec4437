// pm_getPaymasterStubData runs the rules that spend nothing before it answers a stub: for each of them, and for the
// paused paymaster, an operation the stub refuses (-32003 and the rule's reason) is refused by pm_getPaymasterData in
// the same words, and an operation the stub accepts gets the usual stub; for EntryPoint v0.6 and v0.7 operations. The
// stub reserves and records nothing and calls no webhook (a real webhook server sees no request). The deposit, read
// on a real chain, is test/rpc/stubDeposit.test.ts; the flow through a bundler is test/e2e/stubEligibility.test.ts.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type Address, encodeFunctionData, parseAbi, size } from "viem";
import { ENTRY_POINT_V06_ADDRESS } from "../../src/bindings/entryPoints/entryPoint";
import { ENTRY_POINT_V07_ADDRESS } from "../../src/bindings/entryPoints/entryPointV07";
import { listSponsorships } from "../../src/storage/sponsorships";
import { type Dapp, startTestApp, type TestApp } from "../helpers/app";
import { addPolicy, linkFundingWallet, rpc, whitelist } from "../helpers/dappSetup";
import { startWebhookServer, type WebhookServer } from "../helpers/webhookServer";

const NOW_MS = Date.UTC(2026, 0, 15, 12);
const TARGET: Address = "0x1111111111111111111111111111111111111111";
const STRANGER: Address = "0x3333333333333333333333333333333333333333";
const SENDER: Address = "0x4df23b78543f5c2f9cbcdf09956288b3e97bb9a4";
const OTHER_SENDER: Address = "0x5555555555555555555555555555555555555555";
const FACTORY: Address = "0x9406Cc6185a346906296840746125a0E44976454";
const simpleAccount = parseAbi(["function execute(address dest, uint256 value, bytes func)"]);
const call = (to: Address) => encodeFunctionData({ abi: simpleAccount, functionName: "execute", args: [to, 0n, "0x"] });

let t: TestApp;
let hooks: WebhookServer;
let nonce = 0;

before(async () => {
  hooks = await startWebhookServer();
  t = await startTestApp({ now: () => NOW_MS });
});
after(async () => {
  await t.close();
  await hooks.close();
});

type Version = "0.6" | "0.7";
type Fields = Record<string, string>;

/** At 1 gwei: v0.6 worst case (1,000,000 + 3·500,000 + 100,000) gas = 0.0026 ETH; v0.7 adds our 65,000 paymaster gas. */
const GAS: Fields = {
  callGasLimit: "0xf4240",
  verificationGasLimit: "0x7a120",
  preVerificationGas: "0x186a0",
  maxFeePerGas: "0x3b9aca00",
  maxPriorityFeePerGas: "0x3b9aca00",
};

/** An operation as a wallet sends it, with a new nonce; `deploys` adds the version's deployment fields. */
function operation(
  version: Version,
  options: { to?: Address; deploys?: boolean; gas?: Fields; sender?: Address } = {},
): Fields {
  const base = {
    sender: options.sender ?? SENDER,
    nonce: `0x${(++nonce).toString(16)}`,
    callData: call(options.to ?? TARGET),
    ...(options.gas ?? GAS),
    signature: "0x",
  };
  if (version === "0.6") return { ...base, initCode: options.deploys ? `${FACTORY}5fbfb9cf` : "0x" };
  return options.deploys ? { ...base, factory: FACTORY, factoryData: "0x5fbfb9cf" } : base;
}

/** The fee fields alone: what viem sends at the stub before the bundler estimates the gas. */
const FEES_ONLY: Fields = { maxFeePerGas: GAS.maxFeePerGas as string, maxPriorityFeePerGas: "0x3b9aca00" };

const entryPointOf = (version: Version) => (version === "0.6" ? ENTRY_POINT_V06_ADDRESS : ENTRY_POINT_V07_ADDRESS);
const erc7677 = (dapp: Dapp, method: string, version: Version, op: Fields) =>
  rpc(t, dapp, method, [op, entryPointOf(version), "0x7a69", {}]);

async function refusal(dapp: Dapp, method: string, version: Version, op: Fields): Promise<string> {
  const reply = await erc7677(dapp, method, version, op);
  const error = reply.body.error as { code: number; message: string } | undefined;
  assert.ok(error, `${method} v${version} answered ${JSON.stringify(reply.body)}`);
  assert.equal(error.code, -32003, error.message);
  return error.message;
}

async function stub(dapp: Dapp, version: Version, op: Fields): Promise<Fields> {
  const reply = await erc7677(dapp, "pm_getPaymasterStubData", version, op);
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  assert.equal(reply.body.error, undefined, JSON.stringify(reply.body.error));
  const result = reply.body.result as Fields & { isFinal: boolean };
  // The ERC-7677 stub as before: the final length, not final.
  assert.equal(result.isFinal, false);
  if (version === "0.6") assert.equal(size(result.paymasterAndData as `0x${string}`), 276);
  else assert.equal(size(result.paymasterData as `0x${string}`), 256);
  return result;
}

/** A dApp that deploys accounts and calls TARGET, with a funding wallet: every rule passes until a case changes it. */
async function eligibleDapp(options: { funding?: boolean; deployments?: boolean } = {}): Promise<Dapp> {
  const dapp = await t.dapp({ name: `shop-${++nonce}` });
  if (options.funding !== false) await linkFundingWallet(t, dapp);
  if (options.deployments !== false) await addPolicy(t, dapp, "WALLET_DEPLOYMENT", {});
  await whitelist(t, dapp, TARGET, [], []);
  return dapp;
}

const patch = (dapp: Dapp, path: string, body?: unknown) =>
  t.call("PATCH", path, { token: dapp.token, apiKey: dapp.apiKey, body });

interface RuleCase {
  rule: string;
  /** The dApp as the case needs it. */
  dapp(): Promise<Dapp>;
  /** An operation the stub and the final request both refuse. */
  refused(version: Version): Fields;
  /** The refusal's text, both methods alike. */
  reason: (dapp: Dapp) => RegExp;
  /** An operation the stub accepts, after `fix` when the case has one (a setup change). */
  accepted(version: Version): Fields;
  fix?(dapp: Dapp): Promise<void>;
}

/** The TIME_WINDOW policy of each dApp of that case, by paymasterId. */
const windows = new Map<string, string>();

const CASES: RuleCase[] = [
  {
    rule: "paused paymaster",
    async dapp() {
      const dapp = await eligibleDapp();
      assert.equal((await patch(dapp, "paymasterParameters", pausing(dapp, false))).status, 200);
      return dapp;
    },
    refused: (version) => operation(version),
    reason: (dapp) => new RegExp(`^Paymaster "shop-\\d+" \\(${dapp.paymasterId}\\) is paused$`),
    accepted: (version) => operation(version),
    fix: async (dapp) => assert.equal((await patch(dapp, "paymasterParameters", pausing(dapp, true))).status, 200),
  },
  {
    rule: "fundingAndRules (no funding wallet)",
    dapp: () => eligibleDapp({ funding: false }),
    refused: (version) => operation(version),
    reason: () => /^Not sponsored: No funding wallet is linked to this paymaster/,
    accepted: (version) => operation(version),
    fix: async (dapp) => {
      await linkFundingWallet(t, dapp);
    },
  },
  {
    rule: "walletDeployment",
    dapp: () => eligibleDapp({ deployments: false }),
    refused: (version) => operation(version, { deploys: true }),
    reason: () => /^Not sponsored: Wallet deployment is not sponsored: the operation has (initCode|a factory)/,
    accepted: (version) => operation(version),
  },
  {
    rule: "senderLists (a blocked sender)",
    async dapp() {
      const dapp = await eligibleDapp();
      await addPolicy(t, dapp, "SENDER_BLOCKLIST", { addresses: [SENDER] }, "abusers");
      return dapp;
    },
    refused: (version) => operation(version),
    reason: () => new RegExp(`^Not sponsored: Sender ${SENDER} is on the blocklist "abusers"$`),
    accepted: (version) => operation(version, { sender: OTHER_SENDER }),
  },
  {
    rule: "senderLists (a sender not on the allowlist)",
    async dapp() {
      const dapp = await eligibleDapp();
      await addPolicy(t, dapp, "SENDER_ALLOWLIST", { addresses: [OTHER_SENDER] }, "beta");
      return dapp;
    },
    refused: (version) => operation(version),
    reason: () => new RegExp(`^Not sponsored: Sender ${SENDER} is not on the allowlist "beta"$`),
    accepted: (version) => operation(version, { sender: OTHER_SENDER }),
  },
  {
    rule: "contractWhitelist",
    dapp: () => eligibleDapp(),
    refused: (version) => operation(version, { to: STRANGER }),
    reason: () =>
      new RegExp(`^Not sponsored: Smart contract data not found: ${STRANGER} is not a whitelisted contract$`),
    accepted: (version) => operation(version),
  },
  {
    rule: "maxCostPerOp (the gas sent already exceeds the cap)",
    async dapp() {
      const dapp = await eligibleDapp();
      await addPolicy(t, dapp, "MAX_COST_PER_OP", { threshold: 0.0002, thresholdType: "NATIVE_ASSET" }, "one op");
      return dapp;
    },
    refused: (version) => operation(version),
    reason: () => /^Not sponsored: Cost cap "one op" exceeded: this operation may cost up to 0\.00\d+ ETH/,
    // Gas not estimated yet: at its cheapest (v0.7: our 65,000 paymaster gas at 1 gwei) it is within the cap.
    accepted: (version) => operation(version, { gas: FEES_ONLY }),
  },
  {
    rule: "timeWindow",
    async dapp() {
      const dapp = await eligibleDapp();
      windows.set(dapp.paymasterId, await addPolicy(t, dapp, "TIME_WINDOW", { endTimeInEpoch: NOW_MS - 1 }, "launch"));
      return dapp;
    },
    refused: (version) => operation(version),
    reason: () => /^Not sponsored: Sponsorship window "launch" closed at 2026-01-15T11:59:59\.999Z/,
    accepted: (version) => operation(version),
    fix: async (dapp) => {
      const policy = windows.get(dapp.paymasterId);
      assert.equal((await patch(dapp, `paymaster-policy/deactivate/${policy}`)).status, 200);
    },
  },
];

const pausing = (dapp: Dapp, active: boolean) => ({ paymasterId: dapp.paymasterId, type: "active", active });

for (const version of ["0.6", "0.7"] as const) {
  describe(`EntryPoint v${version}: each rule that spends nothing, at the stub and at the final request`, () => {
    for (const rule of CASES) {
      test(`${rule.rule}: refused at the stub and at pm_getPaymasterData alike; then a stub`, async () => {
        const dapp = await rule.dapp();
        const op = rule.refused(version);
        const atStub = await refusal(dapp, "pm_getPaymasterStubData", version, op);
        assert.match(atStub, rule.reason(dapp));
        assert.deepEqual(await listSponsorships(t.db, dapp.paymasterId), [], "the stub records nothing");
        assert.equal(await refusal(dapp, "pm_getPaymasterData", version, op), atStub, "the final request agrees");

        await rule.fix?.(dapp);
        await stub(dapp, version, rule.accepted(version));
      });
    }
  });
}

describe("the stub spends nothing", () => {
  test("webhooks: none is called at the stub (the server sees no request); the final request calls them", async () => {
    const dapp = await eligibleDapp();
    await addPolicy(t, dapp, "WEBHOOK", { url: hooks.url("/false") }, "kyc");
    const registered = await t.call("POST", "webhook", {
      token: dapp.token,
      apiKey: dapp.apiKey,
      body: { webhookUrl: hooks.url("/false"), requestType: "POST" },
    });
    assert.equal(registered.status, 200, JSON.stringify(registered.body));
    const before = hooks.calls.length;
    for (const version of ["0.6", "0.7"] as const) await stub(dapp, version, operation(version));
    assert.equal(hooks.calls.length, before, "no webhook call at the stub");
    assert.deepEqual(await listSponsorships(t.db, dapp.paymasterId), []);

    const refused = await refusal(dapp, "pm_getPaymasterData", "0.7", operation("0.7"));
    assert.match(refused, /^Not sponsored: Webhook .* refused: arePoliciesVerified false/);
    assert.equal(hooks.calls.length, before + 2, "the same webhooks answer the final request");
  });

  test("spending limits: stubs reserve nothing; a limit of one operation still sponsors one after many stubs", async () => {
    const dapp = await eligibleDapp();
    const policyData = {
      type: "PAYMASTER",
      cycleDuration: { value: 1, unit: "day" },
      threshold: 1,
      thresholdType: "COUNT",
    };
    await addPolicy(t, dapp, "PAYMASTER_SA_LIMIT", policyData, "one");
    for (let i = 0; i < 3; i++) {
      for (const version of ["0.6", "0.7"] as const) await stub(dapp, version, operation(version));
    }
    assert.deepEqual(await listSponsorships(t.db, dapp.paymasterId), [], "no record, so no reservation");

    const signed = await erc7677(dapp, "pm_getPaymasterData", "0.7", operation("0.7"));
    assert.equal(signed.body.error, undefined, JSON.stringify(signed.body));
    // The limit is now full: the next final request is refused, and so is nothing at the stub (it is a spending rule).
    assert.match(await refusal(dapp, "pm_getPaymasterData", "0.7", operation("0.7")), /Spending limit "one"/);
    await stub(dapp, "0.7", operation("0.7"));
  });
});
