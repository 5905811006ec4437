// The dashboard's pure helpers: which field an API message is about, ether amounts in and out (exact, BigInt), and
// what the sign-in page says about a refused token.
import assert from "node:assert/strict";
import { test } from "node:test";
import { fieldOf } from "../../dashboard/src/api/fieldOf";
import { signInRefusal, TOKEN_MISSING, TOKEN_NOT_ACCEPTED } from "../../dashboard/src/api/signInRefusal";
import { formatEther, formatUnits, parseEther, tokenCost } from "../../dashboard/src/wei";

const RULE_FIELDS = {
  name: ["Policy name"],
  threshold: ["policyData.threshold"],
  cycleValue: ["policyData.cycleDuration.value"],
  url: ["policyData.url"],
};

test("an API message lands on the field it names, the longest name winning; otherwise on the form", () => {
  assert.equal(fieldOf("policyData.threshold must be greater than 0", RULE_FIELDS), "threshold");
  assert.equal(
    fieldOf("policyData.cycleDuration.value must be a whole number from 1 to 100000", RULE_FIELDS),
    "cycleValue",
  );
  assert.equal(fieldOf("Policy name already exists", RULE_FIELDS), "name");
  assert.equal(fieldOf("name must not be empty", RULE_FIELDS), "name");
  assert.equal(fieldOf("policyData.url must be an http or https URL", RULE_FIELDS), "url");
  assert.equal(fieldOf("Auth token and API key is required in the headers", RULE_FIELDS), undefined);
  assert.equal(fieldOf("paymaster_name_exists", { name: ["paymaster_name_exists"] }), "name");
  assert.equal(fieldOf("Smart contract address already exists", { name: [], address: [] }), "address");
});

test("ether amounts: wei shown exactly without trailing zeros, typed decimals read exactly", () => {
  assert.equal(formatEther("1500000000000000000"), "1.5");
  assert.equal(formatEther(1n), "0.000000000000000001");
  assert.equal(formatEther("0"), "0");
  assert.equal(formatEther(null), "–");
  assert.equal(parseEther("0.05"), 50_000_000_000_000_000n);
  assert.equal(parseEther(" 2 "), 2_000_000_000_000_000_000n);
  assert.equal(parseEther("0.0000000000000000001"), undefined, "more than 18 decimals");
  assert.equal(parseEther("-1"), undefined);
  assert.equal(parseEther("1e18"), undefined);
});

test("sign-in: a 401 says the typed token was not accepted, not that it is missing; other refusals keep their words", () => {
  const missing = "Auth token is required in the headers";
  assert.equal(signInRefusal(401, missing), TOKEN_NOT_ACCEPTED);
  assert.match(TOKEN_NOT_ACCEPTED, /not accepted/);
  assert.doesNotMatch(TOKEN_NOT_ACCEPTED, /required/);
  const throttled = "Too many requests with wrong credentials from this address: try again in 30 s";
  assert.equal(signInRefusal(429, throttled), throttled);
  assert.equal(
    signInRefusal(0, "The service did not answer: Failed to fetch"),
    "The service did not answer: Failed to fetch",
  );
  // Both land beside the token field.
  const fields = { token: ["auth token", "authToken"] };
  assert.equal(fieldOf(TOKEN_NOT_ACCEPTED, fields), "token");
  assert.equal(fieldOf(TOKEN_MISSING, fields), "token");
});

test("token amounts: base units in the token's decimals, the charge and refund once mined, the maximum before", () => {
  assert.equal(formatUnits("1500000", 6), "1.5");
  assert.equal(formatUnits(7n, 0), "7");
  assert.equal(formatUnits(null, 6), "–");
  const token = { symbol: "TUSDC", decimals: 6, maxCharge: "5247691", charge: null, refund: null };
  assert.equal(tokenCost(token), "at most 5.247691 TUSDC");
  assert.equal(
    tokenCost({ ...token, charge: "3375158", refund: "1872533" }),
    "3.375158 TUSDC (1.872533 TUSDC refunded)",
  );
  // The approve-in-batch token paymaster refunds nothing.
  assert.equal(tokenCost({ ...token, charge: "3375158", refund: "0" }), "3.375158 TUSDC");
  // A row signed before the decimals were recorded shows base units.
  assert.equal(tokenCost({ ...token, decimals: null }), "at most 5247691 base units of TUSDC");
});
