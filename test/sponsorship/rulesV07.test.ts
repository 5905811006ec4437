// The memory-only rules on v0.7 and v0.8 operations: what counts as a deployment in each version, and the contract
// whitelist reading the callData of the accounts those versions bring (SimpleAccount 0.7/0.8, ERC-7579, Coinbase Smart
// Wallet). Also the one tightening for every version: a call back into the account is refused.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  type Address,
  concat,
  encodeAbiParameters,
  encodeFunctionData,
  encodePacked,
  getAddress,
  type Hex,
  pad,
  parseAbi,
  parseAbiParameters,
  toFunctionSelector,
} from "viem";
import type { PolicyType } from "../../src/schemas/management/policyKinds";
import type { SmartAccountInfo } from "../../src/sponsorship/callData";
import { decide } from "../../src/sponsorship/decide";
import type { PartialUserOperation } from "../../src/sponsorship/partialUserOperation";
import type { PartialUserOperationV07 } from "../../src/sponsorship/partialUserOperationV07";
import type { RuleInput, RuleResult } from "../../src/sponsorship/rule";
import { CHEAP_RULES } from "../../src/sponsorship/ruleList";
import { CONTRACT_NOT_FOUND_REASON, contractWhitelist } from "../../src/sponsorship/rules/contractWhitelist";
import { walletDeployment } from "../../src/sponsorship/rules/walletDeployment";
import { NO_RPC_NOTE } from "../../src/sponsorship/senderDeployment";
import type { SponsorshipSetup } from "../../src/sponsorship/setup";
import { testPolicy } from "../helpers/policies";
import { versionOf } from "../helpers/versionOf";

const SENDER = getAddress("0x4df23b78543f5c2f9cbcdf09956288b3e97bb9a4");
const TOKEN = "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48" as Address;
const OTHER = "0x2222222222222222222222222222222222222222" as Address;
const FACTORY = getAddress("0x9406cc6185a346906296840746125a0e44976454");
const MARKER = "0x7702000000000000000000000000000000000000" as Address;
const AUTH = {
  chainId: 31337n,
  address: "0xe6Cae83BdE06E4c305530e199D7217f42808555B" as Address,
  nonce: 0n,
  yParity: 0,
  r: pad("0x01"),
  s: pad("0x02"),
};

const token = parseAbi(["function mint(uint256)", "function burn(uint256)"]);
const MINT = encodeFunctionData({ abi: token, functionName: "mint", args: [5n] });
const BURN = encodeFunctionData({ abi: token, functionName: "burn", args: [5n] });
const MINT_SELECTOR = toFunctionSelector("mint(uint256)");
const BURN_SELECTOR = toFunctionSelector("burn(uint256)");

const accounts = parseAbi([
  "function execute(address target, uint256 value, bytes data)",
  "function executeBatch(address[] dest, uint256[] value, bytes[] func)",
  "struct Call { address target; uint256 value; bytes data; }",
  "function executeBatch(Call[] calls)",
  "function execute(bytes32 mode, bytes executionCalldata)",
]);
type Triple = [Address, bigint, Hex];
const execute = (to: Address, data: Hex, value = 0n) =>
  encodeFunctionData({ abi: accounts, functionName: "execute", args: [to, value, data] });
/** SimpleAccount 0.7: three arrays, the values possibly empty. */
const executeBatchArrays = (calls: Triple[], values = true) =>
  encodeFunctionData({
    abi: accounts,
    functionName: "executeBatch",
    args: [calls.map(([to]) => to), values ? calls.map(([, value]) => value) : [], calls.map(([, , data]) => data)],
  });
/** SimpleAccount 0.8, Coinbase Smart Wallet: Call[]. */
const executeBatchCalls = (calls: Triple[]) =>
  encodeFunctionData({
    abi: accounts,
    functionName: "executeBatch",
    args: [calls.map(([target, value, data]) => ({ target, value, data }))],
  });
const MODE_SINGLE = pad("0x00", { dir: "right", size: 32 });
const MODE_BATCH = pad("0x01", { dir: "right", size: 32 });
const MODE_DELEGATECALL = pad("0xff", { dir: "right", size: 32 });
const execute7579Single = ([to, value, data]: Triple, mode = MODE_SINGLE) =>
  encodeFunctionData({
    abi: accounts,
    functionName: "execute",
    args: [mode, encodePacked(["address", "uint256", "bytes"], [to, value, data])],
  });
const execute7579Batch = (calls: Triple[]) =>
  encodeFunctionData({
    abi: accounts,
    functionName: "execute",
    args: [MODE_BATCH, encodeAbiParameters(parseAbiParameters("(address,uint256,bytes)[]"), [calls])],
  });

function setup(policies: PolicyType[], contracts: Record<string, string[]>): SponsorshipSetup {
  return {
    paymasterId: "pm",
    accountId: "account",
    chainId: 31337,
    fundingAddress: "0x00000000000000000000000000000000000f0f0f",
    policies: policies.map((policyType) => testPolicy(policyType)),
    contracts: new Map(Object.entries(contracts).map(([a, s]) => [a.toLowerCase(), new Set(s)])),
    webhooks: [],
  };
}

const v07 = (fields: Partial<PartialUserOperationV07> = {}): PartialUserOperationV07 => ({
  entryPointVersion: "0.7",
  sender: SENDER,
  nonce: 0n,
  callData: "0x",
  ...fields,
});
const v08 = (fields: Partial<PartialUserOperationV07> = {}) => v07({ entryPointVersion: "0.8", ...fields });

function input(
  userOp: PartialUserOperation | PartialUserOperationV07,
  policies: PolicyType[] = [],
  contracts: Record<string, string[]> = {},
  smartAccount?: SmartAccountInfo,
): RuleInput {
  return {
    setup: setup(policies, contracts),
    userOp,
    version: versionOf(userOp),
    ...(smartAccount ? { smartAccount } : {}),
    nowMs: 0,
    validUntil: 300,
  };
}

const passed = (rule: string): RuleResult => ({ rule, passed: true });
/** A deployment passed without a chain to read the sender's code from: the outcome says the fields decided. */
const passedUnread = (rule: string): RuleResult => ({ rule, passed: true, reason: NO_RPC_NOTE });
const refused = (rule: string, reason: string): RuleResult => ({ rule, passed: false, reason });

describe("rule 2, walletDeployment, on v0.7 and v0.8 operations", () => {
  const refusal = (what: string) =>
    refused(
      "walletDeployment",
      `Wallet deployment is not sponsored: the operation has ${what} and no active WALLET_DEPLOYMENT policy`,
    );
  const cases: { name: string; op: PartialUserOperationV07; policies?: PolicyType[]; expected: RuleResult }[] = [
    { name: "v0.7 without a factory", op: v07({ callData: MINT }), expected: passed("walletDeployment") },
    {
      name: "v0.7 with a factory, no rule",
      op: v07({ factory: FACTORY, factoryData: "0x01" }),
      expected: refusal("a factory"),
    },
    {
      name: "v0.7 with a factory and the rule",
      op: v07({ factory: FACTORY }),
      policies: ["WALLET_DEPLOYMENT"],
      expected: passedUnread("walletDeployment"),
    },
    { name: "v0.8 with a factory, no rule", op: v08({ factory: FACTORY }), expected: refusal("a factory") },
    {
      name: "v0.8 with an EIP-7702 authorization, no rule",
      op: v08({ factory: MARKER, eip7702Auth: AUTH }),
      expected: refusal("an EIP-7702 authorization"),
    },
    {
      name: "v0.8 with an EIP-7702 authorization and the rule",
      op: v08({ factory: MARKER, eip7702Auth: AUTH }),
      policies: ["PAYMASTER_SA_LIMIT", "WALLET_DEPLOYMENT"],
      expected: passedUnread("walletDeployment"),
    },
    {
      name: "v0.8, the marker alone (an EOA whose code is already set): no deployment",
      op: v08({ factory: MARKER }),
      expected: passed("walletDeployment"),
    },
    {
      name: "v0.8, the marker with initialisation data, no rule",
      op: v08({ factory: MARKER, factoryData: "0xc4d66de8" }),
      expected: refusal("an EIP-7702 initialisation (factoryData after the 0x7702 marker)"),
    },
  ];
  for (const { name, op, policies, expected } of cases) {
    test(name, async () => assert.deepEqual(await walletDeployment.evaluate(input(op, policies)), expected));
  }
});

describe("rule 3, contractWhitelist, on the callData of v0.7 and v0.8 accounts", () => {
  const whitelist = { [TOKEN]: [MINT_SELECTOR], [OTHER]: [] };
  const notFound = (detail: string) => refused("contractWhitelist", `${CONTRACT_NOT_FOUND_REASON}: ${detail}`);
  const burnRefused = notFound(`selector ${BURN_SELECTOR} is not a whitelisted method of ${TOKEN.toLowerCase()}`);
  const good: Triple[] = [
    [TOKEN, 0n, MINT],
    [OTHER, 1n, "0x"],
  ];
  const bad: Triple[] = [
    [TOKEN, 0n, MINT],
    [TOKEN, 0n, BURN],
  ];
  const cases: { name: string; op: PartialUserOperationV07; account?: SmartAccountInfo; expected: RuleResult }[] = [
    {
      name: "SimpleAccount 0.7 execute",
      op: v07({ callData: execute(TOKEN, MINT) }),
      account: { name: "INFINITISM", version: "0.7.0" },
      expected: passed("contractWhitelist"),
    },
    {
      name: "SimpleAccount 0.7 executeBatch, values given",
      op: v07({ callData: executeBatchArrays(good) }),
      account: { name: "INFINITISM", version: "0.7.0" },
      expected: passed("contractWhitelist"),
    },
    {
      name: "SimpleAccount 0.7 executeBatch, an empty value array (no value anywhere), unnamed",
      op: v07({ callData: executeBatchArrays([[TOKEN, 0n, MINT]], false) }),
      expected: passed("contractWhitelist"),
    },
    {
      name: "SimpleAccount 0.7 executeBatch with a method not whitelisted",
      op: v07({ callData: executeBatchArrays(bad) }),
      expected: burnRefused,
    },
    {
      name: "SimpleAccount 0.8 executeBatch(Call[])",
      op: v08({ callData: executeBatchCalls(good) }),
      account: { name: "INFINITISM", version: "0.8.0" },
      expected: passed("contractWhitelist"),
    },
    {
      name: "SimpleAccount 0.8 executeBatch(Call[]) with a method not whitelisted, unnamed",
      op: v08({ callData: executeBatchCalls(bad) }),
      expected: burnRefused,
    },
    {
      name: "Simple7702Account (0.8) behind an EIP-7702 authorization, deploying and calling",
      op: v08({ factory: MARKER, eip7702Auth: AUTH, callData: executeBatchCalls(good) }),
      expected: passed("contractWhitelist"),
    },
    {
      name: "ERC-7579 single execution",
      op: v07({ callData: execute7579Single([TOKEN, 0n, MINT]) }),
      account: { name: "erc7579", version: "1.0.0" },
      expected: passed("contractWhitelist"),
    },
    {
      name: "ERC-7579 batch with a contract not whitelisted",
      op: v07({ callData: execute7579Batch([...good, [FACTORY, 0n, MINT]]) }),
      expected: notFound(`${FACTORY.toLowerCase()} is not a whitelisted contract`),
    },
    {
      name: "ERC-7579 delegatecall, even to a whitelisted contract",
      op: v07({ callData: execute7579Single([TOKEN, 0n, MINT], MODE_DELEGATECALL) }),
      expected: notFound(
        "ERC-7579 delegatecall executions are never sponsored: they run code of the target's choice as the account",
      ),
    },
    {
      name: "Coinbase Smart Wallet executeBatch",
      op: v07({ callData: executeBatchCalls(good) }),
      account: { name: "coinbase_smart_wallet", version: "1" },
      expected: passed("contractWhitelist"),
    },
    {
      name: "Coinbase Smart Wallet executeWithoutChainIdValidation (calls to itself): not a layout method",
      op: v07({ callData: concat([toFunctionSelector("executeWithoutChainIdValidation(bytes[])"), pad("0x20")]) }),
      account: { name: "COINBASE_SMART_WALLET", version: "1" },
      expected: notFound("unknown callData layout: selector 0x2c2abd1e of COINBASE_SMART_WALLET 1"),
    },
    {
      name: "v0.7, no callData with a factory: a deployment alone is rule 2's business",
      op: v07({ factory: FACTORY }),
      expected: passed("contractWhitelist"),
    },
    {
      name: "v0.8, no callData with an EIP-7702 authorization",
      op: v08({ eip7702Auth: AUTH }),
      expected: passed("contractWhitelist"),
    },
    {
      name: "v0.8, no callData, the marker alone: nothing to sponsor",
      op: v08({ factory: MARKER }),
      expected: refused("contractWhitelist", "callData is empty: nothing to sponsor"),
    },
  ];
  for (const { name, op, account, expected } of cases) {
    test(name, async () =>
      assert.deepEqual(await contractWhitelist.evaluate(input(op, [], whitelist, account)), expected),
    );
  }
});

describe("a call back into the account is refused, in every version, even when the account is whitelisted", () => {
  // Whitelisting the sender itself with the account's own execute is the one way its inner calls could pass unread.
  const whitelist = { [TOKEN]: [MINT_SELECTOR], [SENDER]: [toFunctionSelector("execute(address,uint256,bytes)")] };
  const reason = `${CONTRACT_NOT_FOUND_REASON}: a call from the account to itself (${SENDER.toLowerCase()}) is never sponsored: what it runs is not checked`;
  const nested = execute(TOKEN, BURN);
  const cases: { name: string; op: PartialUserOperation | PartialUserOperationV07 }[] = [
    {
      name: "v0.6 SimpleAccount execute to itself",
      op: { sender: SENDER, nonce: 0n, initCode: "0x", callData: execute(SENDER, nested) },
    },
    {
      name: "v0.7 SimpleAccount batch whose second call is to itself",
      op: v07({
        callData: executeBatchArrays([
          [TOKEN, 0n, MINT],
          [SENDER, 0n, nested],
        ]),
      }),
    },
    {
      name: "v0.7 ERC-7579 execute inside a single execution",
      op: v07({ callData: execute7579Single([SENDER, 0n, execute7579Single([TOKEN, 0n, BURN])]) }),
    },
    {
      name: "v0.8 a plain transfer to itself, lower case",
      op: v08({ callData: executeBatchCalls([[SENDER.toLowerCase() as Address, 1n, "0x"]]) }),
    },
  ];
  for (const { name, op } of cases) {
    test(name, async () => {
      assert.deepEqual(
        await contractWhitelist.evaluate(input(op, [], whitelist)),
        refused("contractWhitelist", reason),
      );
    });
  }
});

describe("the cheap rules in order (decide) on a v0.8 operation that installs Simple7702Account and calls a token", () => {
  const op = v08({ factory: MARKER, eip7702Auth: AUTH, callData: executeBatchCalls([[TOKEN, 0n, MINT]]) });
  const whitelist = { [TOKEN]: [MINT_SELECTOR] };

  test("with a WALLET_DEPLOYMENT rule and the token whitelisted: sponsored, every rule passed", async () => {
    const decision = await decide(input(op, ["WALLET_DEPLOYMENT"], whitelist), CHEAP_RULES);
    assert.equal(decision.sponsored, true);
    assert.deepEqual(decision.outcomes, [
      passed("fundingAndRules"),
      passedUnread("walletDeployment"),
      passed("contractWhitelist"),
      passed("maxCostPerOp"),
      passed("maxGasPrice"),
      passed("timeWindow"),
      passed("senderLists"),
    ]);
  });

  test("without it: refused by the deployment rule, naming the authorization", async () => {
    const decision = await decide(input(op, [], whitelist), CHEAP_RULES);
    assert.equal(decision.sponsored, false);
    assert.equal(
      !decision.sponsored && decision.reason,
      "Wallet deployment is not sponsored: the operation has an EIP-7702 authorization and no active " +
        "WALLET_DEPLOYMENT policy",
    );
  });
});
