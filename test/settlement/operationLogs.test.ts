// Which EntryPoints and paymasters settlement reads on a chain, and the words a failed token charge is logged with.
import assert from "node:assert/strict";
import { test } from "node:test";
import { encodeErrorResult, parseAbi } from "viem";
import { ENTRY_POINT_V06_ADDRESS } from "../../src/bindings/entryPoints/entryPoint";
import { ENTRY_POINT_V07_ADDRESS, ENTRY_POINT_V08_ADDRESS } from "../../src/bindings/entryPoints/entryPointV07";
import { sponsoringChains } from "../../src/chain/sponsoringChains";
import type { ChainConfig } from "../../src/config";
import { describeRevert, watchedEntryPoints } from "../../src/settlement/operationLogs";

const errors = parseAbi([
  "error Error(string reason)",
  "error PostOpReverted(bytes returnData)",
  "error ERC20InsufficientBalance(address sender, uint256 balance, uint256 needed)",
]);
const SENDER = "0x00000000000000000000000000000000000000AA"; // checksummed, as viem decodes it

test("a failed token pull is described by the token's own error, out of the EntryPoint's PostOpReverted", () => {
  const inner = encodeErrorResult({ abi: errors, errorName: "Error", args: ["ERC20: insufficient allowance"] });
  const wrapped = encodeErrorResult({ abi: errors, errorName: "PostOpReverted", args: [inner] });
  assert.equal(describeRevert(wrapped), "ERC20: insufficient allowance");
  const custom = encodeErrorResult({ abi: errors, errorName: "ERC20InsufficientBalance", args: [SENDER, 5n, 9n] });
  assert.equal(
    describeRevert(encodeErrorResult({ abi: errors, errorName: "PostOpReverted", args: [custom] })),
    `ERC20InsufficientBalance(${SENDER}, 5, 9)`,
  );
  // Unknown or missing data: its first bytes, bounded, and never a throw.
  assert.equal(describeRevert("0x"), "no revert data");
  assert.equal(describeRevert("0xdeadbeef"), "revert data 0xdeadbeef");
  assert.match(describeRevert(`0x${"ab".repeat(500)}`), /^revert data 0x(ab){36}…$/);
});

test("settlement reads each EntryPoint with one of our paymasters on it, token paymasters' failures from v0.7 on", () => {
  const resolve = (chain: ChainConfig) => {
    const resolved = sponsoringChains(new Map([[chain.chainId, chain]])).get(chain.chainId);
    assert.ok(resolved);
    return resolved;
  };
  const token = {
    address: "0x00000000000000000000000000000000000000c0",
    symbol: "TUSD",
    decimals: 6,
    price: { fixedRate: 3_000_000_000n },
    markup: 1_100_000,
  };
  const watched = watchedEntryPoints(
    resolve({
      chainId: 84532,
      name: "Base Sepolia",
      verifyingPaymaster: "0x00000000000000000000000000000000000000a6",
      tokenPaymaster: "0x00000000000000000000000000000000000000b6",
      tokens: [token],
      entryPoints: {
        "0.7": {
          tokenPaymaster: "0x00000000000000000000000000000000000000b7",
          permitTokenPaymaster: "0x00000000000000000000000000000000000000c7",
        },
        // Served but with no paymaster of ours: nothing to settle there.
        "0.8": {},
      },
    }),
  );
  assert.deepEqual(watched, [
    {
      version: "0.6",
      entryPoint: ENTRY_POINT_V06_ADDRESS,
      paymasters: ["0x00000000000000000000000000000000000000a6", "0x00000000000000000000000000000000000000b6"],
    },
    {
      version: "0.7",
      entryPoint: ENTRY_POINT_V07_ADDRESS,
      paymasters: ["0x00000000000000000000000000000000000000b7", "0x00000000000000000000000000000000000000c7"],
      // Both token paymasters' reverted postOps are read: the approve-in-batch one's charge, the up-front one's refund.
      tokenPaymaster: "0x00000000000000000000000000000000000000b7",
      permitTokenPaymaster: "0x00000000000000000000000000000000000000c7",
    },
  ]);
  assert.ok(!watched.some((entry) => entry.entryPoint === ENTRY_POINT_V08_ADDRESS));
  // A chain with no paymaster of ours at all is not watched.
  assert.deepEqual(watchedEntryPoints(resolve({ chainId: 84532, name: "Base Sepolia" })), []);
});
