// Fee tokens in the chains file: the accepted forms, their defaults, each refusal with a message naming the entry and
// the field, and where the local chain's defaults apply (its token paymaster address; TUSD while the embedded chain runs).
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { sponsoringChains } from "../../src/chain/sponsoringChains";
import { ConfigError, DEFAULT_TOKEN_MARKUP, readChains } from "../../src/config";
import { withLocalChain } from "../../src/devChain/localChain";
import { LOCAL_TOKENS } from "../../src/devChain/localTokens";
import { LOCAL_TOKEN_PAYMASTER_ADDRESS } from "../../src/devChain/tokenDeployment";
import { premiumPercentage } from "../../src/tokens/quote";

const dir = mkdtempSync(path.join(tmpdir(), "paymaster-tokens-"));
let files = 0;
function chainsFile(chains: unknown): string {
  const file = path.join(dir, `chains-${++files}.json`);
  writeFileSync(file, JSON.stringify(chains));
  return file;
}

const USDC = "0x036CbD53842c5426634e7929541eC2318f3dCF7e";
const FEED = "0x3ec8593F930EA45ea58c968260e6e9FF53FC934f";
const PAYMASTER = "0x00000f7365cA6C59A2C93719ad53d567ed49c14C";

function chainWith(tokens: unknown, extra: Record<string, unknown> = {}) {
  return [{ chainId: 84532, name: "Base Sepolia", tokenPaymaster: PAYMASTER, tokens, ...extra }];
}

test("both price sources, with their defaults: markup 1.1e6, no logo, no dollar price", () => {
  const chains = readChains(
    chainsFile(
      chainWith([
        { address: USDC, symbol: "USDC", decimals: 6, price: { aggregator: FEED, maxAgeSeconds: 3600 }, usdPrice: 1 },
        {
          address: FEED,
          symbol: "FIX",
          decimals: 18,
          logoUrl: "https://example.com/fix.png",
          price: { fixedRate: "2500000000000000000000" },
          markup: 1_000_000,
        },
      ]),
    ),
  );
  assert.deepEqual(chains.get(84532)?.tokens, [
    {
      address: USDC.toLowerCase(),
      symbol: "USDC",
      decimals: 6,
      price: { aggregator: FEED.toLowerCase(), maxAgeSeconds: 3600 },
      markup: DEFAULT_TOKEN_MARKUP,
      usdPrice: 1,
    },
    {
      address: FEED.toLowerCase(),
      symbol: "FIX",
      decimals: 18,
      logoUrl: "https://example.com/fix.png",
      price: { fixedRate: 2_500n * 10n ** 18n },
      markup: 1_000_000,
    },
  ]);
  assert.equal(DEFAULT_TOKEN_MARKUP, 1_100_000);
  assert.deepEqual([1_000_000, 1_100_000, 1_125_000, 2_000_000].map(premiumPercentage), ["0", "10", "12.5", "100"]);
});

const good = { address: USDC, symbol: "USDC", decimals: 6, price: { fixedRate: "3000000000" } };
const refusals: [string, unknown, RegExp][] = [
  ["tokens not an array", { ...good }, /entry 0: tokens must be an array/],
  ["no token paymaster", [good], /tokens need the chain's tokenPaymaster address/],
  ["zero address", [{ ...good, address: `0x${"0".repeat(40)}` }], /tokens\[0\]: address must be a non-zero 20-byte/],
  ["short address", [{ ...good, address: "0x1234" }], /tokens\[0\]: address must be/],
  ["twice", [good, { ...good, address: USDC.toLowerCase() }], /token 0x036cbd.* is listed twice/],
  ["no symbol", [{ ...good, symbol: "" }], /tokens\[0\] \(0x036C.*\): symbol must be a non-empty string/],
  ["decimals", [{ ...good, decimals: 6.5 }], /decimals must be a whole number from 0 to 36/],
  ["decimals 37", [{ ...good, decimals: 37 }], /decimals must be a whole number from 0 to 36/],
  ["logo", [{ ...good, logoUrl: "ftp://x" }], /logoUrl must be an http\(s\) URL/],
  ["markup low", [{ ...good, markup: 999_999 }], /markup must be a whole number of millionths from 1000000/],
  ["markup high", [{ ...good, markup: 2_000_001 }], /markup must be/],
  ["markup fraction", [{ ...good, markup: 1.1 }], /markup must be/],
  ["usdPrice", [{ ...good, usdPrice: 0 }], /usdPrice must be a positive number/],
  ["no price", [{ ...good, price: undefined }], /price must be \{"fixedRate"/],
  ["both prices", [{ ...good, price: { fixedRate: "1", aggregator: FEED } }], /exactly one of the two/],
  ["neither", [{ ...good, price: {} }], /exactly one of the two/],
  ["unknown field", [{ ...good, price: { fixedRate: "1", rate: 2 } }], /price has unknown field rate/],
  ["zero rate", [{ ...good, price: { fixedRate: "0" } }], /price.fixedRate must be a positive whole number/],
  ["decimal rate", [{ ...good, price: { fixedRate: "1.5" } }], /price.fixedRate must be a positive whole number/],
  [
    "age on fixed",
    [{ ...good, price: { fixedRate: "1", maxAgeSeconds: 60 } }],
    /maxAgeSeconds applies to an aggregator/,
  ],
  ["feed", [{ ...good, price: { aggregator: "0xfeed" } }], /price.aggregator must be a non-zero 20-byte/],
  ["age", [{ ...good, price: { aggregator: FEED, maxAgeSeconds: 0 } }], /maxAgeSeconds must be a positive whole/],
];
for (const [name, tokens, message] of refusals) {
  test(`refuses a token configuration: ${name}`, () => {
    const extra = name === "no token paymaster" ? { tokenPaymaster: undefined } : {};
    assert.throws(
      () => readChains(chainsFile(chainWith(tokens, extra))),
      (error: unknown) => error instanceof ConfigError && message.test(error.message),
    );
  });
}

test("the local chain: its token paymaster by default, and TUSD by the aggregator while the embedded chain runs", () => {
  // 31337 may list tokens without a tokenPaymaster: the deterministic local address applies.
  const listed = readChains(chainsFile([{ chainId: 31337, name: "local", tokens: [good] }]));
  assert.equal(sponsoringChains(listed).get(31337)?.tokenPaymaster, LOCAL_TOKEN_PAYMASTER_ADDRESS);
  assert.equal(withLocalChain(listed, { rpcUrl: "http://127.0.0.1:9" }).get(31337)?.tokens?.[0]?.symbol, "USDC");

  // Without tokens: ERC20 mode is off, until the embedded chain runs and brings its own.
  const bare = readChains(chainsFile([{ chainId: 31337, name: "local" }]));
  assert.equal(sponsoringChains(bare).get(31337)?.tokenPaymaster, undefined);
  const running = sponsoringChains(withLocalChain(bare, { rpcUrl: "http://127.0.0.1:9" })).get(31337);
  assert.equal(running?.tokenPaymaster, LOCAL_TOKEN_PAYMASTER_ADDRESS);
  assert.deepEqual(running?.tokens, LOCAL_TOKENS);
  assert.ok(LOCAL_TOKENS[0] && "aggregator" in LOCAL_TOKENS[0].price);

  // Any other chain has no token paymaster of ours to default to.
  assert.equal(sponsoringChains(readChains(chainsFile(chainWith([])))).get(84532)?.tokenPaymaster, undefined);
});
