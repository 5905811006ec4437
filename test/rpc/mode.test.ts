// The mode object and the context that follow the operation in the sponsorship methods' params: every field read, its
// default, and every refusal naming the field as the client sent it.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  DEFAULT_EXPIRY_SECONDS,
  MAX_EXPIRY_SECONDS,
  type ModeParams,
  type ModeRequest,
  parseMode,
  parseModeParams,
  parseSponsoredContext,
} from "../../src/rpc/mode";
import { sponsorParamsForm } from "../../src/rpc/paramsForm";
import { assertInvalidParams } from "../helpers/invalidParams";

const SPONSORED_DEFAULTS = { mode: "SPONSORED", calculateGasLimits: false, expirySeconds: DEFAULT_EXPIRY_SECONDS };
const ERC20_DEFAULTS = { mode: "ERC20", calculateGasLimits: false, expirySeconds: DEFAULT_EXPIRY_SECONDS };
const ACCOUNT = { name: "BICONOMY", version: "2.0.0" };
const TOKEN = "0x0000000000000000000000000000000000000abc";

test("the expiry bounds are 300 s by default and one day at most", () => {
  assert.equal(DEFAULT_EXPIRY_SECONDS, 300);
  assert.equal(MAX_EXPIRY_SECONDS, 86_400);
});

describe("parseMode accepts", () => {
  const cases: { name: string; input: unknown; expected: ModeRequest }[] = [
    {
      name: "SPONSORED alone: the defaults",
      input: { mode: "SPONSORED" },
      expected: SPONSORED_DEFAULTS as ModeRequest,
    },
    {
      name: "SPONSORSHIP, the older spelling, as SPONSORED",
      input: { mode: "SPONSORSHIP" },
      expected: SPONSORED_DEFAULTS as ModeRequest,
    },
    {
      name: "calculateGasLimits true",
      input: { mode: "SPONSORED", calculateGasLimits: true },
      expected: { ...SPONSORED_DEFAULTS, calculateGasLimits: true } as ModeRequest,
    },
    {
      name: "calculateGasLimits null: the default",
      input: { mode: "SPONSORED", calculateGasLimits: null },
      expected: SPONSORED_DEFAULTS as ModeRequest,
    },
    {
      name: "expiryDuration 1, the least",
      input: { mode: "SPONSORED", expiryDuration: 1 },
      expected: { ...SPONSORED_DEFAULTS, expirySeconds: 1 } as ModeRequest,
    },
    {
      name: "expiryDuration 86400, the most",
      input: { mode: "SPONSORED", expiryDuration: 86_400 },
      expected: { ...SPONSORED_DEFAULTS, expirySeconds: 86_400 } as ModeRequest,
    },
    {
      name: "expiryDuration null: the default",
      input: { mode: "SPONSORED", expiryDuration: null },
      expected: SPONSORED_DEFAULTS as ModeRequest,
    },
    {
      name: "sponsorshipInfo null or empty: nothing added",
      input: { mode: "SPONSORED", sponsorshipInfo: {} },
      expected: SPONSORED_DEFAULTS as ModeRequest,
    },
    {
      name: "webhookData, as given",
      input: { mode: "SPONSORED", sponsorshipInfo: { webhookData: { user: "u1", n: 5, nested: { a: [1] } } } },
      expected: { ...SPONSORED_DEFAULTS, webhookData: { user: "u1", n: 5, nested: { a: [1] } } } as ModeRequest,
    },
    {
      name: "webhookData null: absent",
      input: { mode: "SPONSORED", sponsorshipInfo: { webhookData: null, smartAccountInfo: null } },
      expected: SPONSORED_DEFAULTS as ModeRequest,
    },
    {
      name: "smartAccountInfo: name and version only, other fields dropped",
      input: { mode: "SPONSORED", sponsorshipInfo: { smartAccountInfo: { ...ACCOUNT, extra: 1 } } },
      expected: { ...SPONSORED_DEFAULTS, smartAccount: ACCOUNT } as ModeRequest,
    },
    {
      name: "every SPONSORED field at once",
      input: {
        mode: "SPONSORED",
        calculateGasLimits: true,
        expiryDuration: 60,
        sponsorshipInfo: { webhookData: { k: "v" }, smartAccountInfo: ACCOUNT },
      },
      expected: {
        mode: "SPONSORED",
        calculateGasLimits: true,
        expirySeconds: 60,
        webhookData: { k: "v" },
        smartAccount: ACCOUNT,
      },
    },
    {
      name: "ERC20 alone: an empty tokenInfo",
      input: { mode: "ERC20" },
      expected: { ...ERC20_DEFAULTS, tokenInfo: {} } as ModeRequest,
    },
    {
      name: "ERC20 with tokenInfo, calculateGasLimits and expiryDuration; sponsorshipInfo is not read",
      input: {
        mode: "ERC20",
        calculateGasLimits: true,
        expiryDuration: 600,
        tokenInfo: { feeTokenAddress: TOKEN },
        sponsorshipInfo: { smartAccountInfo: ACCOUNT },
      },
      expected: { mode: "ERC20", calculateGasLimits: true, expirySeconds: 600, tokenInfo: { feeTokenAddress: TOKEN } },
    },
  ];
  for (const { name, input, expected } of cases) test(name, () => assert.deepEqual(parseMode(input), expected));
});

describe("parseMode refuses, naming the field", () => {
  const expiry = "params[1].expiryDuration must be a whole number of seconds from 1 to 86400";
  const cases: { name: string; input: unknown; expected: string }[] = [
    { name: "no mode object", input: undefined, expected: "params[1] is required: the mode object" },
    { name: "null", input: null, expected: "params[1] is required: the mode object" },
    { name: "a string", input: "SPONSORED", expected: "params[1] must be an object" },
    { name: "an array", input: [{ mode: "SPONSORED" }], expected: "params[1] must be an object" },
    { name: "no mode", input: {}, expected: "params[1].mode is required: SPONSORED or ERC20" },
    { name: "mode null", input: { mode: null }, expected: "params[1].mode is required: SPONSORED or ERC20" },
    {
      name: "mode in lower case",
      input: { mode: "sponsored" },
      expected: 'params[1].mode must be SPONSORED or ERC20, got "sponsored"',
    },
    { name: "mode a number", input: { mode: 5 }, expected: "params[1].mode must be SPONSORED or ERC20, got 5" },
    {
      name: "a long mode: quoted up to 40 characters",
      input: { mode: "X".repeat(100) },
      expected: `params[1].mode must be SPONSORED or ERC20, got "${"X".repeat(39)}`,
    },
    {
      name: "calculateGasLimits a string",
      input: { mode: "SPONSORED", calculateGasLimits: "true" },
      expected: "params[1].calculateGasLimits must be true or false",
    },
    {
      name: "calculateGasLimits is read before mode",
      input: { calculateGasLimits: 1 },
      expected: "params[1].calculateGasLimits must be true or false",
    },
    { name: "expiryDuration 0", input: { mode: "SPONSORED", expiryDuration: 0 }, expected: expiry },
    { name: "expiryDuration 86401", input: { mode: "SPONSORED", expiryDuration: 86_401 }, expected: expiry },
    { name: "expiryDuration -1", input: { mode: "SPONSORED", expiryDuration: -1 }, expected: expiry },
    { name: "expiryDuration 1.5", input: { mode: "SPONSORED", expiryDuration: 1.5 }, expected: expiry },
    { name: "expiryDuration a string", input: { mode: "SPONSORED", expiryDuration: "300" }, expected: expiry },
    { name: "expiryDuration in ERC20 mode", input: { mode: "ERC20", expiryDuration: 0 }, expected: expiry },
    {
      name: "sponsorshipInfo not an object",
      input: { mode: "SPONSORED", sponsorshipInfo: "x" },
      expected: "params[1].sponsorshipInfo must be an object",
    },
    {
      name: "webhookData an array",
      input: { mode: "SPONSORED", sponsorshipInfo: { webhookData: [1] } },
      expected: "params[1].sponsorshipInfo.webhookData must be an object",
    },
    {
      name: "smartAccountInfo a string",
      input: { mode: "SPONSORED", sponsorshipInfo: { smartAccountInfo: "BICONOMY" } },
      expected: "params[1].sponsorshipInfo.smartAccountInfo must be an object",
    },
    {
      name: "smartAccountInfo without a name",
      input: { mode: "SPONSORED", sponsorshipInfo: { smartAccountInfo: { version: "2.0.0" } } },
      expected: "params[1].sponsorshipInfo.smartAccountInfo.name must be a string",
    },
    {
      name: "smartAccountInfo with a numeric version",
      input: { mode: "SPONSORED", sponsorshipInfo: { smartAccountInfo: { name: "BICONOMY", version: 2 } } },
      expected: "params[1].sponsorshipInfo.smartAccountInfo.version must be a string",
    },
    {
      name: "tokenInfo not an object",
      input: { mode: "ERC20", tokenInfo: TOKEN },
      expected: "params[1].tokenInfo must be an object",
    },
  ];
  for (const { name, input, expected } of cases)
    test(name, () => assertInvalidParams(() => parseMode(input), expected));

  test("`where` names the object in every message", () => {
    assertInvalidParams(() => parseMode(undefined, "params[3]"), "params[3] is required: the mode object");
    assertInvalidParams(
      () => parseMode({ mode: "SPONSORED", sponsorshipInfo: { webhookData: 1 } }, "params[3]"),
      "params[3].sponsorshipInfo.webhookData must be an object",
    );
  });
});

describe("parseSponsoredContext (permissionless's params[2], ERC-7677's params[3])", () => {
  const ERC20_REFUSAL = "ERC20 is served elsewhere";
  const accepted: { name: string; input: unknown; expected: ModeRequest }[] = [
    { name: "absent: SPONSORED with the defaults", input: undefined, expected: SPONSORED_DEFAULTS as ModeRequest },
    { name: "null: the same", input: null, expected: SPONSORED_DEFAULTS as ModeRequest },
    { name: "empty: the same", input: {}, expected: SPONSORED_DEFAULTS as ModeRequest },
    { name: "mode null: SPONSORED", input: { mode: null }, expected: SPONSORED_DEFAULTS as ModeRequest },
    { name: "mode SPONSORSHIP", input: { mode: "SPONSORSHIP" }, expected: SPONSORED_DEFAULTS as ModeRequest },
    {
      name: "the mode object's fields, without a mode",
      input: { calculateGasLimits: true, expiryDuration: 30, sponsorshipInfo: { smartAccountInfo: ACCOUNT } },
      expected: { mode: "SPONSORED", calculateGasLimits: true, expirySeconds: 30, smartAccount: ACCOUNT },
    },
  ];
  for (const { name, input, expected } of accepted) {
    test(name, () => assert.deepEqual(parseSponsoredContext(input, "params[2]", ERC20_REFUSAL), expected));
  }

  const refused: { name: string; input: unknown; where: string; expected: string }[] = [
    { name: "ERC20", input: { mode: "ERC20" }, where: "params[2]", expected: `params[2].mode: ${ERC20_REFUSAL}` },
    {
      name: "ERC20 in params[3]",
      input: { mode: "ERC20" },
      where: "params[3]",
      expected: `params[3].mode: ${ERC20_REFUSAL}`,
    },
    { name: "a string", input: "SPONSORED", where: "params[2]", expected: "params[2] must be an object" },
    { name: "an array", input: [], where: "params[3]", expected: "params[3] must be an object" },
    {
      name: "an unknown mode",
      input: { mode: "FREE" },
      where: "params[2]",
      expected: 'params[2].mode must be SPONSORED or ERC20, got "FREE"',
    },
    {
      name: "a bad expiry",
      input: { expiryDuration: 0 },
      where: "params[3]",
      expected: "params[3].expiryDuration must be a whole number of seconds from 1 to 86400",
    },
  ];
  for (const { name, input, where, expected } of refused) {
    test(`refused: ${name}`, () =>
      assertInvalidParams(() => parseSponsoredContext(input, where, ERC20_REFUSAL), expected));
  }
});

describe("parseModeParams: the two forms", () => {
  const OP = { sender: "0x1" };
  const ENTRY_POINT = "0x5FF137D4b0FDCD49DcA30c7CF57E578a026d2789";
  const accepted: { name: string; input: unknown[]; expected: ModeParams }[] = [
    {
      name: "[userOp, modeObject]",
      input: [OP, { mode: "ERC20" }],
      expected: { form: "modeObject", mode: { ...ERC20_DEFAULTS, tokenInfo: {} } as ModeRequest },
    },
    {
      name: "[userOp, entryPoint]: SPONSORED with the defaults, the address in lower case",
      input: [OP, ENTRY_POINT],
      expected: {
        form: "entryPoint",
        entryPoint: ENTRY_POINT.toLowerCase() as `0x${string}`,
        mode: SPONSORED_DEFAULTS,
      } as ModeParams,
    },
    {
      name: "[userOp, entryPoint, context]",
      input: [OP, ENTRY_POINT, { sponsorshipInfo: { webhookData: { a: 1 } } }],
      expected: {
        form: "entryPoint",
        entryPoint: ENTRY_POINT.toLowerCase() as `0x${string}`,
        mode: { ...SPONSORED_DEFAULTS, webhookData: { a: 1 } },
      } as ModeParams,
    },
  ];
  for (const { name, input, expected } of accepted)
    test(name, () => assert.deepEqual(parseModeParams(sponsorParamsForm(input)), expected));

  const refused: { name: string; input: unknown[]; expected: string }[] = [
    { name: "[userOp] alone", input: [OP], expected: "params[1] is required: the mode object" },
    { name: "a number as params[1]", input: [OP, 5], expected: "params[1] must be an object" },
    {
      name: "a string that is no address",
      input: [OP, "SPONSORED"],
      expected: "params[1] must be an address: 0x followed by 40 hex digits",
    },
    {
      name: "ERC20 in the context",
      input: [OP, ENTRY_POINT, { mode: "ERC20" }],
      expected:
        "params[2].mode: a context after the EntryPoint address serves SPONSORED mode; for ERC20 send the mode object as params[1]",
    },
    { name: "a context that is not an object", input: [OP, ENTRY_POINT, "x"], expected: "params[2] must be an object" },
  ];
  for (const { name, input, expected } of refused) {
    test(`refused: ${name}`, () => assertInvalidParams(() => parseModeParams(sponsorParamsForm(input)), expected));
  }
});
