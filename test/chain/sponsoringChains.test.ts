// Which EntryPoints a chain serves, from the chains file's entries and the local chain's defaults, and the answer to a
// request's EntryPoint address: its version and our paymaster for it, or a reason that names what is missing.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ENTRY_POINT_V06_ADDRESS } from "../../src/bindings/entryPoints/entryPoint";
import { ENTRY_POINT_V07_ADDRESS, ENTRY_POINT_V08_ADDRESS } from "../../src/bindings/entryPoints/entryPointV07";
import { LOCAL_ENTRY_POINT_STACKS, LOCAL_VERIFYING_PAYMASTER_ADDRESS } from "../../src/chain/localAddresses";
import {
  type EntryPointAnswer,
  type PaymasterKind,
  paymasterForEntryPoint,
  type ServedEntryPoint,
  type SponsoringChain,
  sponsoringChains,
} from "../../src/chain/sponsoringChains";
import type { ChainConfig, TokenConfig } from "../../src/config";

const V06_PAYMASTER = "0x00000000000000000000000000000000000000a6";
const V06_TOKEN_PAYMASTER = "0x00000000000000000000000000000000000000b6";
const V07_PAYMASTER = "0x00000000000000000000000000000000000000a7";
const V07_TOKEN_PAYMASTER = "0x00000000000000000000000000000000000000b7";
const V08_PAYMASTER = "0x00000000000000000000000000000000000000a8";
const OTHER_ENTRY_POINT = "0x00000000000000000000000000000000000000e8";
const TOKEN: TokenConfig = {
  address: "0x00000000000000000000000000000000000000c0",
  symbol: "TUSD",
  decimals: 6,
  price: { fixedRate: 3_000_000_000n },
  markup: 1_100_000,
};

function resolve(chain: Partial<ChainConfig> & { chainId: number }): SponsoringChain {
  const resolved = sponsoringChains(new Map([[chain.chainId, { name: `chain ${chain.chainId}`, ...chain }]])).get(
    chain.chainId,
  );
  assert.ok(resolved);
  return resolved;
}

const served = (chain: SponsoringChain): Record<string, ServedEntryPoint> => Object.fromEntries(chain.entryPoints);

/** What the local chain serves for EntryPoint v0.9 unless the chains file names otherwise. */
const V07_PERMIT_PAYMASTER = "0x0000000000000000000000000000000000007e27";
const LOCAL_V09 = {
  entryPoint: LOCAL_ENTRY_POINT_STACKS["0.9"].entryPoint,
  verifyingPaymaster: LOCAL_ENTRY_POINT_STACKS["0.9"].verifyingPaymaster,
};

test("a chain serves the later EntryPoint versions its entry lists, at the canonical address unless it names one", () => {
  const cases: { name: string; chain: Partial<ChainConfig> & { chainId: number }; expected: object }[] = [
    { name: "no entryPoints: v0.6 only", chain: { chainId: 84532 }, expected: {} },
    {
      name: "v0.7 with its paymaster, canonical EntryPoint",
      chain: { chainId: 84532, entryPoints: { "0.7": { verifyingPaymaster: V07_PAYMASTER } } },
      expected: { "0.7": { entryPoint: ENTRY_POINT_V07_ADDRESS, verifyingPaymaster: V07_PAYMASTER } },
    },
    {
      name: "an empty v0.8 entry: served, but with no paymaster",
      chain: { chainId: 84532, entryPoints: { "0.8": {} } },
      expected: { "0.8": { entryPoint: ENTRY_POINT_V08_ADDRESS } },
    },
    {
      name: "a token paymaster beside fee tokens is kept",
      chain: {
        chainId: 84532,
        tokenPaymaster: V06_TOKEN_PAYMASTER,
        tokens: [TOKEN],
        entryPoints: { "0.7": { entryPoint: OTHER_ENTRY_POINT, tokenPaymaster: V07_TOKEN_PAYMASTER } },
      },
      expected: { "0.7": { entryPoint: OTHER_ENTRY_POINT, tokenPaymaster: V07_TOKEN_PAYMASTER } },
    },
    {
      name: "an up-front token paymaster is kept beside fee tokens and dropped without them, as the token paymaster is",
      chain: {
        chainId: 84532,
        tokens: [TOKEN],
        entryPoints: { "0.8": { tokenPaymaster: V07_TOKEN_PAYMASTER, permitTokenPaymaster: V07_PERMIT_PAYMASTER } },
      },
      expected: {
        "0.8": {
          entryPoint: ENTRY_POINT_V08_ADDRESS,
          tokenPaymaster: V07_TOKEN_PAYMASTER,
          permitTokenPaymaster: V07_PERMIT_PAYMASTER,
        },
      },
    },
    {
      name: "an up-front token paymaster without fee tokens is dropped",
      chain: { chainId: 84532, entryPoints: { "0.8": { permitTokenPaymaster: V07_PERMIT_PAYMASTER } } },
      expected: { "0.8": { entryPoint: ENTRY_POINT_V08_ADDRESS } },
    },
    {
      name: "a token paymaster without fee tokens is dropped, as v0.6's is",
      chain: { chainId: 84532, entryPoints: { "0.7": { tokenPaymaster: V07_TOKEN_PAYMASTER } } },
      expected: { "0.7": { entryPoint: ENTRY_POINT_V07_ADDRESS } },
    },
    {
      name: "the local chain serves every later version at its deterministic addresses",
      chain: { chainId: 31337 },
      expected: {
        "0.7": {
          entryPoint: ENTRY_POINT_V07_ADDRESS,
          verifyingPaymaster: LOCAL_ENTRY_POINT_STACKS["0.7"].verifyingPaymaster,
        },
        "0.8": {
          entryPoint: ENTRY_POINT_V08_ADDRESS,
          verifyingPaymaster: LOCAL_ENTRY_POINT_STACKS["0.8"].verifyingPaymaster,
        },
        "0.9": LOCAL_V09,
      },
    },
    {
      name: "the local chain with fee tokens also gets each version's local token paymasters (both kinds), as v0.6 does",
      chain: { chainId: 31337, tokens: [TOKEN] },
      expected: {
        "0.7": {
          entryPoint: ENTRY_POINT_V07_ADDRESS,
          verifyingPaymaster: LOCAL_ENTRY_POINT_STACKS["0.7"].verifyingPaymaster,
          tokenPaymaster: LOCAL_ENTRY_POINT_STACKS["0.7"].tokenPaymaster,
          permitTokenPaymaster: LOCAL_ENTRY_POINT_STACKS["0.7"].permitTokenPaymaster,
        },
        "0.8": {
          entryPoint: ENTRY_POINT_V08_ADDRESS,
          verifyingPaymaster: LOCAL_ENTRY_POINT_STACKS["0.8"].verifyingPaymaster,
          tokenPaymaster: LOCAL_ENTRY_POINT_STACKS["0.8"].tokenPaymaster,
          permitTokenPaymaster: LOCAL_ENTRY_POINT_STACKS["0.8"].permitTokenPaymaster,
        },
        "0.9": {
          ...LOCAL_V09,
          tokenPaymaster: LOCAL_ENTRY_POINT_STACKS["0.9"].tokenPaymaster,
          permitTokenPaymaster: LOCAL_ENTRY_POINT_STACKS["0.9"].permitTokenPaymaster,
        },
      },
    },
    {
      name: "on the local chain a named token paymaster wins over the local one",
      chain: { chainId: 31337, tokens: [TOKEN], entryPoints: { "0.7": { tokenPaymaster: V07_TOKEN_PAYMASTER } } },
      expected: {
        "0.7": {
          entryPoint: ENTRY_POINT_V07_ADDRESS,
          verifyingPaymaster: LOCAL_ENTRY_POINT_STACKS["0.7"].verifyingPaymaster,
          tokenPaymaster: V07_TOKEN_PAYMASTER,
          permitTokenPaymaster: LOCAL_ENTRY_POINT_STACKS["0.7"].permitTokenPaymaster,
        },
        "0.8": {
          entryPoint: ENTRY_POINT_V08_ADDRESS,
          verifyingPaymaster: LOCAL_ENTRY_POINT_STACKS["0.8"].verifyingPaymaster,
          tokenPaymaster: LOCAL_ENTRY_POINT_STACKS["0.8"].tokenPaymaster,
          permitTokenPaymaster: LOCAL_ENTRY_POINT_STACKS["0.8"].permitTokenPaymaster,
        },
        "0.9": {
          ...LOCAL_V09,
          tokenPaymaster: LOCAL_ENTRY_POINT_STACKS["0.9"].tokenPaymaster,
          permitTokenPaymaster: LOCAL_ENTRY_POINT_STACKS["0.9"].permitTokenPaymaster,
        },
      },
    },
    {
      name: "on the local chain a named paymaster wins, and another EntryPoint gets no local default",
      chain: {
        chainId: 31337,
        entryPoints: { "0.7": { entryPoint: OTHER_ENTRY_POINT }, "0.8": { verifyingPaymaster: V08_PAYMASTER } },
      },
      expected: {
        "0.7": { entryPoint: OTHER_ENTRY_POINT },
        "0.8": { entryPoint: ENTRY_POINT_V08_ADDRESS, verifyingPaymaster: V08_PAYMASTER },
        "0.9": LOCAL_V09,
      },
    },
  ];
  for (const { name, chain, expected } of cases) assert.deepEqual(served(resolve(chain)), expected, name);
  // v0.6 keeps the chain's own fields.
  assert.equal(resolve({ chainId: 31337 }).verifyingPaymaster, LOCAL_VERIFYING_PAYMASTER_ADDRESS);
  assert.equal(resolve({ chainId: 31337 }).entryPoint, ENTRY_POINT_V06_ADDRESS);
});

test("a request's EntryPoint resolves to its version and our paymaster, or to a reason naming what is missing", () => {
  const testnet = resolve({
    chainId: 84532,
    verifyingPaymaster: V06_PAYMASTER,
    entryPoints: { "0.7": { tokenPaymaster: V07_TOKEN_PAYMASTER } },
  });
  const withTokens = resolve({
    chainId: 84532,
    verifyingPaymaster: V06_PAYMASTER,
    tokenPaymaster: V06_TOKEN_PAYMASTER,
    tokens: [TOKEN],
    entryPoints: {
      "0.7": { verifyingPaymaster: V07_PAYMASTER, tokenPaymaster: V07_TOKEN_PAYMASTER },
      "0.8": { entryPoint: OTHER_ENTRY_POINT, verifyingPaymaster: V08_PAYMASTER },
    },
  });
  const local = resolve({ chainId: 31337 });
  const v07 = ENTRY_POINT_V07_ADDRESS;
  const v08 = ENTRY_POINT_V08_ADDRESS;
  const cases: [SponsoringChain, string, PaymasterKind, EntryPointAnswer][] = [
    // v0.6, in whatever case the client writes it.
    [
      testnet,
      ENTRY_POINT_V06_ADDRESS.toLowerCase(),
      "verifying",
      { served: true, version: "0.6", entryPoint: ENTRY_POINT_V06_ADDRESS, paymaster: V06_PAYMASTER },
    ],
    [
      withTokens,
      ENTRY_POINT_V06_ADDRESS,
      "token",
      { served: true, version: "0.6", entryPoint: ENTRY_POINT_V06_ADDRESS, paymaster: V06_TOKEN_PAYMASTER },
    ],
    [
      withTokens,
      v07.toUpperCase().replace("0X", "0x"),
      "verifying",
      { served: true, version: "0.7", entryPoint: v07, paymaster: V07_PAYMASTER },
    ],
    [withTokens, v07, "token", { served: true, version: "0.7", entryPoint: v07, paymaster: V07_TOKEN_PAYMASTER }],
    [
      withTokens,
      OTHER_ENTRY_POINT,
      "verifying",
      { served: true, version: "0.8", entryPoint: OTHER_ENTRY_POINT, paymaster: V08_PAYMASTER },
    ],
    [
      local,
      v08,
      "verifying",
      { served: true, version: "0.8", entryPoint: v08, paymaster: LOCAL_ENTRY_POINT_STACKS["0.8"].verifyingPaymaster },
    ],
    // Refusals.
    [
      testnet,
      v07,
      "verifying",
      {
        served: false,
        reason: `EntryPoint ${v07} is not served on chain 84532: the chains file names no verifying paymaster for EntryPoint v0.7`,
      },
    ],
    [
      testnet,
      v08,
      "verifying",
      {
        served: false,
        reason: `EntryPoint ${v08} is not served on chain 84532: the chains file lists no EntryPoint v0.8 for it (entryPoints["0.8"])`,
      },
    ],
    [
      withTokens,
      v08,
      "verifying",
      {
        served: false,
        reason: `EntryPoint ${v08} is not served on chain 84532: the chains file gives EntryPoint v0.8 there as ${OTHER_ENTRY_POINT}`,
      },
    ],
    [
      withTokens,
      "0x00000000000000000000000000000000000000ff",
      "verifying",
      {
        served: false,
        reason: `EntryPoint 0x00000000000000000000000000000000000000ff is not served on chain 84532: it serves ${ENTRY_POINT_V06_ADDRESS} (v0.6), ${v07} (v0.7), ${OTHER_ENTRY_POINT} (v0.8)`,
      },
    ],
    [
      testnet,
      OTHER_ENTRY_POINT,
      "verifying",
      {
        served: false,
        reason: `EntryPoint ${OTHER_ENTRY_POINT} is not served on chain 84532: it serves ${ENTRY_POINT_V06_ADDRESS} (v0.6), ${v07} (v0.7)`,
      },
    ],
    [
      testnet,
      v07,
      "token",
      {
        served: false,
        reason: `EntryPoint ${v07} is not served on chain 84532: the chains file lists no fee tokens for it (ERC20 mode)`,
      },
    ],
    [
      withTokens,
      OTHER_ENTRY_POINT,
      "token",
      {
        served: false,
        reason: `EntryPoint ${OTHER_ENTRY_POINT} is not served on chain 84532: the chains file names no token paymaster for EntryPoint v0.8`,
      },
    ],
    [
      local,
      v07,
      "token",
      {
        served: false,
        reason: `EntryPoint ${v07} is not served on chain 31337: the chains file lists no fee tokens for it (ERC20 mode)`,
      },
    ],
    [testnet, "0x1234", "verifying", { served: false, reason: 'EntryPoint "0x1234" is not a 20-byte hex address' }],
    [testnet, "", "token", { served: false, reason: 'EntryPoint "" is not a 20-byte hex address' }],
  ];
  for (const [chain, entryPoint, kind, expected] of cases) {
    assert.deepEqual(
      paymasterForEntryPoint(chain, entryPoint, kind),
      expected,
      `${chain.chainId} ${entryPoint} ${kind}`,
    );
  }
});

test("a chain entry with no paymasters is refused for v0.6 too, and serves no later version", () => {
  // The v0.6 EntryPoint is known by default, but no paymaster is.
  const bare = resolve({ chainId: 11155111 });
  assert.deepEqual(paymasterForEntryPoint(bare, ENTRY_POINT_V06_ADDRESS, "verifying"), {
    served: false,
    reason: `EntryPoint ${ENTRY_POINT_V06_ADDRESS} is not served on chain 11155111: the chains file names no verifying paymaster for EntryPoint v0.6`,
  });
  assert.equal(bare.entryPoints.size, 0);
  assert.deepEqual(paymasterForEntryPoint(bare, ENTRY_POINT_V07_ADDRESS, "verifying"), {
    served: false,
    reason: `EntryPoint ${ENTRY_POINT_V07_ADDRESS} is not served on chain 11155111: the chains file lists no EntryPoint v0.7 for it (entryPoints["0.7"])`,
  });
});
