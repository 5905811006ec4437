import assert from "node:assert/strict";
import { test } from "node:test";
import { isAddressEqual } from "viem";
import { ENTRY_POINT_VERSIONS } from "../src/bindings/entryPoints/versions";
import { paymasterForEntryPoint, sponsoringChains } from "../src/chain/sponsoringChains";
import { loadConfig } from "../src/config";

// The default chains file (config/chains.json) lists the networks an operator is most likely to go live on, so that
// going live is adding an rpcUrl and what `contracts deploy` printed, not looking up chain ids and EntryPoints.

const KNOWN_NETWORKS: ReadonlyArray<[number, string]> = [
  [1, "Ethereum"],
  [11155111, "Ethereum Sepolia"],
  [8453, "Base"],
  [84532, "Base Sepolia"],
  [10, "Optimism"],
  [11155420, "OP Sepolia"],
  [42161, "Arbitrum One"],
  [421614, "Arbitrum Sepolia"],
  [137, "Polygon PoS"],
  [80002, "Polygon Amoy"],
  [56, "BNB Chain"],
  [97, "BNB Chain testnet"],
];

test("the default chains file passes the schema and lists the main networks and their test networks by name", () => {
  const chains = loadConfig({}).chains;
  for (const [chainId, name] of KNOWN_NETWORKS) assert.equal(chains.get(chainId)?.name, name, `chain ${chainId}`);
  assert.ok(chains.has(31337), "the local development chain stays");
  assert.equal(chains.size, KNOWN_NETWORKS.length + 1, "nothing else");
});

test("each known network names the canonical EntryPoint of every version, and no node, bundler or paymaster", () => {
  const chains = sponsoringChains(loadConfig({}).chains);
  for (const [chainId] of KNOWN_NETWORKS) {
    const chain = chains.get(chainId);
    assert.ok(chain);
    assert.ok(isAddressEqual(chain.entryPoint, ENTRY_POINT_VERSIONS["0.6"].canonicalAddress), `${chainId} v0.6`);
    // A version released later (v0.9) is listed once its EntryPoint is on these networks, so only these two are required.
    for (const version of ["0.7", "0.8"] as const) assert.ok(chain.entryPoints.has(version), `${chainId} v${version}`);
    for (const [version, served] of chain.entryPoints) {
      assert.ok(
        isAddressEqual(served.entryPoint, ENTRY_POINT_VERSIONS[version].canonicalAddress),
        `${chainId} v${version}`,
      );
      assert.deepEqual(Object.keys(served), ["entryPoint"], `${chainId} v${version}: no paymaster until deployed`);
    }
    assert.equal(chain.rpcUrl, undefined);
    assert.equal(chain.bundlerUrl, undefined);
    assert.equal(chain.verifyingPaymaster, undefined);
  }
});

test("a known network without an rpcUrl and paymasters serves nothing: a request is refused with what is missing", () => {
  const chain = sponsoringChains(loadConfig({}).chains).get(8453);
  assert.ok(chain);
  for (const version of ["0.6", ...chain.entryPoints.keys()] as const) {
    const answer = paymasterForEntryPoint(chain, ENTRY_POINT_VERSIONS[version].canonicalAddress, "verifying");
    assert.equal(answer.served, false, `v${version}`);
    if (answer.served) continue;
    assert.match(
      answer.reason,
      new RegExp(`names no verifying paymaster for EntryPoint v${version.replace(".", "\\.")}`),
    );
  }
});
