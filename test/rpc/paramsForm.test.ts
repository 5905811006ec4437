// The params' form, decided by its schema (src/schemas/rpc/paramsForm.ts) before any position is read, and the
// context's fee token fields read by the context's schema: each form and signal, and the field each refusal names.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { erc7677ParamsForm, sponsorParamsForm } from "../../src/rpc/paramsForm";
import { parseQuoteContext, parseTokenContext } from "../../src/rpc/tokenContext";
import { assertInvalidParams } from "../helpers/invalidParams";

const OP = { sender: "0x0000000000000000000000000000000000000001", nonce: "0x0" };
const ENTRY_POINT = "0x0000000071727De22E5E9d8BAf0edAc6f37da032";
const TOKEN = "0x0000000000000000000000000000000000000abc";

describe("sponsorParamsForm: the form picks how each position is read", () => {
  test("a string second is the EntryPoint form, malformed or not (its address is checked when read)", () => {
    const form = sponsorParamsForm([OP, "SPONSORED"]);
    assert.equal(form.form, "entryPoint");
    assert.equal(form.form === "entryPoint" && form.entryPoint, "SPONSORED");
  });

  test("any other second, or none, is the mode object form", () => {
    for (const params of [[OP, { mode: "SPONSORED" }], [OP, 5], [OP, null], [OP]]) {
      assert.equal(sponsorParamsForm(params).form, "modeObject", JSON.stringify(params));
    }
  });

  test("params beyond the context are ignored, as before", () => {
    assert.equal(sponsorParamsForm([OP, ENTRY_POINT, {}, "extra"]).form, "entryPoint");
  });

  const signals: { context: unknown; namesToken: boolean; asksForToken: boolean; asksForQuote: boolean }[] = [
    { context: undefined, namesToken: false, asksForToken: false, asksForQuote: false },
    { context: {}, namesToken: false, asksForToken: false, asksForQuote: false },
    { context: { token: TOKEN }, namesToken: true, asksForToken: true, asksForQuote: true },
    // A malformed token still asks for ERC20 mode, so that the token context's schema names it.
    { context: { token: 7 }, namesToken: true, asksForToken: true, asksForQuote: true },
    { context: { token: null }, namesToken: false, asksForToken: false, asksForQuote: false },
    { context: { mode: "ERC20" }, namesToken: false, asksForToken: true, asksForQuote: true },
    { context: { mode: "SPONSORED", tokenList: [TOKEN] }, namesToken: false, asksForToken: false, asksForQuote: true },
    { context: { preferredToken: TOKEN }, namesToken: false, asksForToken: false, asksForQuote: true },
    { context: { preferredToken: null, tokenList: null }, namesToken: false, asksForToken: false, asksForQuote: false },
    // An array is no context object, whatever members it carries.
    { context: Object.assign([], { token: TOKEN }), namesToken: false, asksForToken: false, asksForQuote: false },
  ];
  for (const { context, ...expected } of signals) {
    test(`the context ${JSON.stringify(context)}`, () => {
      const form = sponsorParamsForm([OP, ENTRY_POINT, context]);
      assert.ok(form.form === "entryPoint");
      const { namesToken, asksForToken, asksForQuote } = form;
      assert.deepEqual({ namesToken, asksForToken, asksForQuote }, expected);
    });
  }

  test("v0.7 members in the mode object form are refused, naming the form that serves them", () => {
    for (const member of ["factory", "paymaster", "paymasterPostOpGasLimit", "eip7702Auth"]) {
      assertInvalidParams(
        () => sponsorParamsForm([{ ...OP, [member]: "0x01" }, { mode: "SPONSORED" }]),
        "params[0] has EntryPoint v0.7 members (factory, paymaster fields or eip7702Auth), but [userOp, modeObject] " +
          "serves EntryPoint v0.6 operations; for v0.7 or v0.8 send [userOp, entryPointAddress, context]",
      );
    }
    // null counts as absent, and the EntryPoint form takes v0.7 members.
    assert.equal(sponsorParamsForm([{ ...OP, factory: null }, { mode: "SPONSORED" }]).form, "modeObject");
    assert.equal(sponsorParamsForm([{ ...OP, factory: TOKEN }, ENTRY_POINT]).form, "entryPoint");
  });
});

describe("erc7677ParamsForm", () => {
  test("the EntryPoint only when params[1] is a string, and the context's ask for ERC20 mode", () => {
    assert.deepEqual(erc7677ParamsForm([OP, ENTRY_POINT, "0x1", { token: TOKEN }]), {
      userOp: OP,
      entryPoint: ENTRY_POINT,
      chainId: "0x1",
      context: { token: TOKEN },
      asksForToken: true,
    });
    assert.equal(erc7677ParamsForm([OP, 5, "0x1"]).entryPoint, undefined);
    assert.equal(erc7677ParamsForm([OP, ENTRY_POINT, "0x1"]).asksForToken, false);
  });
});

describe("the context's fee token fields, read by its schema", () => {
  test("a malformed token, preferredToken or tokenList entry is named as sent", () => {
    assertInvalidParams(
      () => parseTokenContext({ token: "0x12" }, "params[3]"),
      'params[3].token must be a token address (0x followed by 40 hex digits), got "0x12"',
    );
    // The field named is the one that is wrong, even after a token left null.
    assertInvalidParams(
      () => parseQuoteContext({ token: null, preferredToken: "0x12" }, "params[2]"),
      'params[2].preferredToken must be a token address (0x followed by 40 hex digits), got "0x12"',
    );
    assertInvalidParams(
      () => parseQuoteContext({ tokenList: "0xabc" }, "params[2]"),
      "params[2].tokenList must be an array of token addresses",
    );
    assertInvalidParams(
      () => parseQuoteContext({ tokenList: [TOKEN, 7] }, "params[2]"),
      "params[2].tokenList[1] must be a token address (0x followed by 40 hex digits), got 7",
    );
  });

  test("ERC20 mode without a token, or with an empty one, is refused; tokenInfo's feeTokenAddress serves too", () => {
    const required = "params[2].token is required in ERC20 mode: the address of the fee token that pays for the gas";
    assertInvalidParams(() => parseTokenContext({ mode: "ERC20" }, "params[2]"), required);
    assertInvalidParams(
      () => parseTokenContext({ token: "", tokenInfo: { feeTokenAddress: TOKEN } }, "params[2]"),
      required,
    );
    const fromTokenInfo = parseTokenContext({ mode: "ERC20", tokenInfo: { feeTokenAddress: TOKEN } }, "params[2]");
    assert.equal(fromTokenInfo.feeToken, TOKEN);
    assert.equal(fromTokenInfo.feeTokenLabel, "params[2].tokenInfo.feeTokenAddress");
    assert.equal(parseTokenContext({ token: TOKEN }, "params[2]").feeTokenLabel, "params[2].token");
  });

  test("a quote's selection: token or preferredToken, else tokenList, else tokenInfo's", () => {
    assert.deepEqual(parseQuoteContext({ preferredToken: TOKEN }, "params[2]").selection, { preferredToken: TOKEN });
    assert.deepEqual(parseQuoteContext({ token: "", tokenList: [TOKEN] }, "params[2]").selection, {
      tokenList: [TOKEN],
    });
    assert.deepEqual(parseQuoteContext({ mode: "ERC20", tokenInfo: { tokenList: [TOKEN] } }, "params[2]").selection, {
      tokenList: [TOKEN],
    });
  });
});
