// The rules that read only memory (CHEAP_RULES), each evaluated alone on a setup built here: the exact outcome, and
// the exact reason of every refusal. No chain is given, so the deployment rule reads the operation's fields (the
// sender's code on a real chain: test/rpc/deployedSender.test.ts).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { type Address, encodeFunctionData, type Hex, parseAbi, toFunctionSelector } from "viem";
import { ENTRY_POINT_VERSIONS } from "../../src/bindings/entryPoints/versions";
import type { PolicyType } from "../../src/schemas/management/policyKinds";
import type { SmartAccountInfo } from "../../src/sponsorship/callData";
import type { RuleInput, RuleResult } from "../../src/sponsorship/rule";
import { CONTRACT_NOT_FOUND_REASON, contractWhitelist } from "../../src/sponsorship/rules/contractWhitelist";
import {
  fundingAndRules,
  NO_FUNDING_WALLET_REASON,
  NO_POLICIES_REASON,
} from "../../src/sponsorship/rules/fundingAndRules";
import { walletDeployment } from "../../src/sponsorship/rules/walletDeployment";
import { NO_RPC_NOTE } from "../../src/sponsorship/senderDeployment";
import type { SponsorshipSetup } from "../../src/sponsorship/setup";
import { testPolicy } from "../helpers/policies";

const FUNDING = "0x00000000000000000000000000000000000f0f0f" as Address;
const SENDER = "0x4df23b78543f5c2f9cbcdf09956288b3e97bb9a4" as Address;
/** Checksummed, as decoded callData gives addresses: the whitelist is keyed in lower case. */
const TOKEN = "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48" as Address;
const OTHER = "0x2222222222222222222222222222222222222222" as Address;
const INIT_CODE = "0x9406cc6185a346906296840746125a0e449764545fbfb9cf000000000000000000000000" as Hex;

const tokenAbi = parseAbi(["function mint(uint256)", "function burn(uint256)"]);
const MINT = encodeFunctionData({ abi: tokenAbi, functionName: "mint", args: [5n] });
const BURN = encodeFunctionData({ abi: tokenAbi, functionName: "burn", args: [5n] });
const MINT_SELECTOR = toFunctionSelector("mint(uint256)");

const accountAbi = parseAbi([
  "function execute(address dest, uint256 value, bytes func)",
  "function executeBatch(address[] dest, bytes[] func)",
]);
const execute = (to: Address, data: Hex, value = 0n) =>
  encodeFunctionData({ abi: accountAbi, functionName: "execute", args: [to, value, data] });
const executeBatch = (calls: [Address, Hex][]) =>
  encodeFunctionData({
    abi: accountAbi,
    functionName: "executeBatch",
    args: [calls.map(([to]) => to), calls.map(([, data]) => data)],
  });

interface Given {
  funding?: Address | null;
  policies?: PolicyType[];
  /** Whitelisted contracts: address → selectors. */
  contracts?: Record<string, string[]>;
  initCode?: Hex;
  callData?: Hex;
  smartAccount?: SmartAccountInfo;
}

function input(given: Given): RuleInput {
  const setup: SponsorshipSetup = {
    paymasterId: "pm",
    accountId: "account",
    chainId: 31337,
    fundingAddress: given.funding === undefined ? FUNDING : given.funding,
    policies: (given.policies ?? []).map((type) => testPolicy(type)),
    contracts: new Map(
      Object.entries(given.contracts ?? {}).map(([address, selectors]) => [address.toLowerCase(), new Set(selectors)]),
    ),
    webhooks: [],
  };
  return {
    setup,
    userOp: { sender: SENDER, nonce: 0n, initCode: given.initCode ?? "0x", callData: given.callData ?? "0x" },
    version: ENTRY_POINT_VERSIONS["0.6"],
    ...(given.smartAccount ? { smartAccount: given.smartAccount } : {}),
    nowMs: 0,
    validUntil: 300,
  };
}

const passed = (rule: string): RuleResult => ({ rule, passed: true });
/** A deployment passed without a chain to read the sender's code from: the outcome says the fields decided. */
const passedUnread = (rule: string): RuleResult => ({ rule, passed: true, reason: NO_RPC_NOTE });
const refused = (rule: string, reason: string): RuleResult => ({ rule, passed: false, reason });

describe("rule 1, fundingAndRules: a funding wallet and something to pay for", () => {
  const cases: { name: string; given: Given; expected: RuleResult }[] = [
    {
      name: "no funding wallet, whatever else",
      given: { funding: null, policies: ["WALLET_DEPLOYMENT"], contracts: { [TOKEN]: [MINT_SELECTOR] } },
      expected: refused("fundingAndRules", NO_FUNDING_WALLET_REASON),
    },
    {
      name: "a funding wallet, no rule and no contract",
      given: {},
      expected: refused("fundingAndRules", NO_POLICIES_REASON),
    },
    { name: "a rule", given: { policies: ["PAYMASTER_SA_LIMIT"] }, expected: passed("fundingAndRules") },
    { name: "a WEBHOOK rule", given: { policies: ["WEBHOOK"] }, expected: passed("fundingAndRules") },
    { name: "a whitelisted contract", given: { contracts: { [TOKEN]: [] } }, expected: passed("fundingAndRules") },
  ];
  for (const { name, given, expected } of cases) {
    test(name, () => assert.deepEqual(fundingAndRules.evaluate(input(given)), expected));
  }

  test("the reasons, word for word (the SDK matches the first)", () => {
    assert.equal(
      NO_POLICIES_REASON,
      "No policies were set on the dashboard. Please set policies to allow gas sponsorship via paymasters",
    );
    assert.equal(
      NO_FUNDING_WALLET_REASON,
      "No funding wallet is linked to this paymaster: link one through funding-message and the paymaster update",
    );
  });
});

describe("rule 2, walletDeployment: initCode only under a WALLET_DEPLOYMENT rule", () => {
  const REFUSAL =
    "Wallet deployment is not sponsored: the operation has initCode and no active WALLET_DEPLOYMENT policy";
  const cases: { name: string; given: Given; expected: RuleResult }[] = [
    { name: "no initCode, no rule", given: {}, expected: passed("walletDeployment") },
    {
      name: "initCode and the rule",
      given: { initCode: INIT_CODE, policies: ["WALLET_DEPLOYMENT"] },
      expected: passedUnread("walletDeployment"),
    },
    {
      name: "initCode and the rule among others",
      given: { initCode: INIT_CODE, policies: ["WEBHOOK", "PAYMASTER_SA_LIMIT", "WALLET_DEPLOYMENT"] },
      expected: passedUnread("walletDeployment"),
    },
    { name: "initCode, no rule", given: { initCode: INIT_CODE }, expected: refused("walletDeployment", REFUSAL) },
    {
      name: "initCode, other rules only",
      given: { initCode: INIT_CODE, policies: ["PAYMASTER_SA_LIMIT", "WEBHOOK"] },
      expected: refused("walletDeployment", REFUSAL),
    },
  ];
  for (const { name, given, expected } of cases) {
    test(name, async () => assert.deepEqual(await walletDeployment.evaluate(input(given)), expected));
  }
});

describe("rule 3, contractWhitelist: every call to a whitelisted contract and method", () => {
  const token = TOKEN.toLowerCase();
  const whitelist = { [TOKEN]: [MINT_SELECTOR] };
  const notFound = (detail: string) => refused("contractWhitelist", `${CONTRACT_NOT_FOUND_REASON}: ${detail}`);
  const cases: { name: string; given: Given; expected: RuleResult | RegExp }[] = [
    {
      name: "no whitelisted contracts: any callData passes, even one that does not decode",
      given: { callData: "0xdeadbeef" },
      expected: passed("contractWhitelist"),
    },
    {
      name: "a whitelisted method of a whitelisted contract",
      given: { contracts: whitelist, callData: execute(TOKEN, MINT) },
      expected: passed("contractWhitelist"),
    },
    {
      name: "with value",
      given: { contracts: whitelist, callData: execute(TOKEN, MINT, 10n ** 18n) },
      expected: passed("contractWhitelist"),
    },
    {
      name: "a method of the contract that is not whitelisted",
      given: { contracts: whitelist, callData: execute(TOKEN, BURN) },
      expected: notFound(`selector ${toFunctionSelector("burn(uint256)")} is not a whitelisted method of ${token}`),
    },
    {
      name: "a contract that is not whitelisted",
      given: { contracts: whitelist, callData: execute(OTHER, MINT) },
      expected: notFound(`${OTHER} is not a whitelisted contract`),
    },
    {
      name: "a whitelisted contract with no whitelisted method: a call with data is refused",
      given: { contracts: { [TOKEN]: [] }, callData: execute(TOKEN, MINT) },
      expected: notFound(`selector ${MINT_SELECTOR} is not a whitelisted method of ${token}`),
    },
    {
      name: "a plain transfer (no data) to a whitelisted contract",
      given: { contracts: { [TOKEN]: [] }, callData: execute(TOKEN, "0x", 1n) },
      expected: passed("contractWhitelist"),
    },
    {
      name: "a plain transfer elsewhere",
      given: { contracts: whitelist, callData: execute(OTHER, "0x", 1n) },
      expected: notFound(`${OTHER} is not a whitelisted contract`),
    },
    {
      name: "call data shorter than a selector",
      given: { contracts: whitelist, callData: execute(TOKEN, "0xa071") },
      expected: notFound(`selector 0xa071 is not a whitelisted method of ${token}`),
    },
    {
      name: "a batch of whitelisted calls",
      given: {
        contracts: { ...whitelist, [OTHER]: [] },
        callData: executeBatch([
          [TOKEN, MINT],
          [OTHER, "0x"],
          [TOKEN, MINT],
        ]),
      },
      expected: passed("contractWhitelist"),
    },
    {
      name: "a batch whose last call is not whitelisted: refused, naming that call",
      given: {
        contracts: whitelist,
        callData: executeBatch([
          [TOKEN, MINT],
          [TOKEN, MINT],
          [OTHER, MINT],
        ]),
      },
      expected: notFound(`${OTHER} is not a whitelisted contract`),
    },
    {
      name: "a batch whose first call is refused: named, not the later one",
      given: {
        contracts: whitelist,
        callData: executeBatch([
          [TOKEN, BURN],
          [OTHER, MINT],
        ]),
      },
      expected: notFound(`selector ${toFunctionSelector("burn(uint256)")} is not a whitelisted method of ${token}`),
    },
    {
      name: "an empty batch makes no call",
      given: { contracts: whitelist, callData: executeBatch([]) },
      expected: refused("contractWhitelist", "callData makes no call: nothing to sponsor"),
    },
    {
      name: "no callData and no initCode",
      given: { contracts: whitelist },
      expected: refused("contractWhitelist", "callData is empty: nothing to sponsor"),
    },
    {
      name: "no callData with initCode: a deployment alone is rule 2's business",
      given: { contracts: whitelist, initCode: INIT_CODE },
      expected: passed("contractWhitelist"),
    },
    {
      name: "a selector of no account layout",
      given: { contracts: whitelist, callData: MINT },
      expected: new RegExp(
        `^${CONTRACT_NOT_FOUND_REASON}: unknown callData layout: selector ${MINT_SELECTOR} is no execute or executeBatch method of a known account; name the account`,
      ),
    },
    {
      name: "callData of another layout than the account named",
      given: {
        contracts: whitelist,
        callData: executeBatch([[TOKEN, MINT]]),
        smartAccount: { name: "BICONOMY", version: "2.0.0" },
      },
      expected: notFound("unknown callData layout: selector 0x18dfb3c7 of BICONOMY 2.0.0"),
    },
    {
      name: "the account named, its layout",
      given: {
        contracts: whitelist,
        callData: executeBatch([[TOKEN, MINT]]),
        smartAccount: { name: "infinitism", version: "1.0.0" },
      },
      expected: passed("contractWhitelist"),
    },
    {
      name: "arguments that do not decode",
      given: { contracts: whitelist, callData: "0xb61d27f6ff" },
      expected: notFound(
        "callData does not decode as BICONOMY 2.0.0 or INFINITISM 1.0.0 or INFINITISM 0.7.0 or INFINITISM 0.8.0 or " +
          "COINBASE_SMART_WALLET 1 selector 0xb61d27f6",
      ),
    },
  ];
  for (const { name, given, expected } of cases) {
    test(name, async () => {
      const outcome: RuleResult = await contractWhitelist.evaluate(input(given));
      if (expected instanceof RegExp) {
        assert.equal(outcome.passed, false);
        assert.equal(outcome.rule, "contractWhitelist");
        assert.match(outcome.reason ?? "", expected);
      } else assert.deepEqual(outcome, expected);
    });
  }
});
