// Validity windows in block numbers (EntryPoint v0.9): bit 47 on both ends when a paymaster asks for blocks, on neither
// otherwise, and the engine's check refuses any window that mixes the two.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { type BlockStamp, ChainHeads } from "../../src/chain/chainHead";
import { MAX_VALIDITY_BLOCKS } from "../../src/schemas/management/validityBlocksLimit";
import {
  BLOCK_NUMBER_FLAG,
  BLOCK_SKEW,
  blockWindow,
  heldSecondsFor,
  planBlockWindow,
  requireWindowUnit,
} from "../../src/sponsorship/blockWindow";

describe("bit 47", () => {
  test("is 2^47, and seconds of any date this service can see stay below it", () => {
    assert.equal(BLOCK_NUMBER_FLAG, 0x800000000000);
    const year9999 = Date.UTC(9999, 11, 31) / 1000;
    assert.ok(year9999 < BLOCK_NUMBER_FLAG);
    const nowSeconds = Math.floor(Date.now() / 1000);
    assert.doesNotThrow(() =>
      requireWindowUnit({ validUntil: nowSeconds + 100 * 365 * 86_400, validAfter: nowSeconds }, "seconds"),
    );
  });

  test("a window in seconds with bit 47 on either end is refused, the end named", () => {
    assert.doesNotThrow(() => requireWindowUnit({ validUntil: BLOCK_NUMBER_FLAG - 1, validAfter: 0 }, "seconds"));
    assert.throws(
      () => requireWindowUnit({ validUntil: BLOCK_NUMBER_FLAG, validAfter: 0 }, "seconds"),
      /validUntil 140737488355328 sets bit 47, which EntryPoint v0\.9 reads as a block number/,
    );
    assert.throws(
      () => requireWindowUnit({ validUntil: 2_000_000_000, validAfter: BLOCK_NUMBER_FLAG + 5 }, "seconds"),
      /validAfter 140737488355333 sets bit 47/,
    );
  });

  test("a window in blocks needs the bit on both ends: one end alone would be read as seconds", () => {
    assert.doesNotThrow(() =>
      requireWindowUnit({ validUntil: BLOCK_NUMBER_FLAG + 120, validAfter: BLOCK_NUMBER_FLAG + 90 }, "blocks"),
    );
    assert.throws(
      () => requireWindowUnit({ validUntil: BLOCK_NUMBER_FLAG + 120, validAfter: 90 }, "blocks"),
      /validAfter 90 lacks bit 47: a window in blocks needs it on both ends/,
    );
    assert.throws(
      () => requireWindowUnit({ validUntil: 2_000_000_000, validAfter: BLOCK_NUMBER_FLAG }, "blocks"),
      /validUntil 2000000000 lacks bit 47/,
    );
  });

  test("a value beyond 48 bits is refused in either unit", () => {
    for (const unit of ["seconds", "blocks"] as const) {
      assert.throws(
        () => requireWindowUnit({ validUntil: 2 ** 48 + BLOCK_NUMBER_FLAG, validAfter: BLOCK_NUMBER_FLAG }, unit),
        /validUntil 422212465065984 is not a uint48/,
      );
      assert.throws(() => requireWindowUnit({ validUntil: 10, validAfter: -1 }, unit), /validAfter -1 is not a uint48/);
    }
  });
});

describe("blockWindow", () => {
  test("starts BLOCK_SKEW blocks before the head and ends the asked number of blocks after it", () => {
    const window = blockWindow(1_000n, 50);
    assert.deepEqual(window, {
      validAfter: BLOCK_NUMBER_FLAG + 1_000 - BLOCK_SKEW,
      validUntil: BLOCK_NUMBER_FLAG + 1_050,
    });
    assert.doesNotThrow(() => requireWindowUnit(window, "blocks"));
  });

  test("near genesis it starts at block 0", () => {
    assert.deepEqual(blockWindow(3n, 5), { validAfter: BLOCK_NUMBER_FLAG, validUntil: BLOCK_NUMBER_FLAG + 8 });
  });

  test("a head and count that reach bit 47 are refused", () => {
    assert.throws(() => blockWindow(BigInt(BLOCK_NUMBER_FLAG - 10), 10), /does not fit below bit 47/);
  });
});

describe("heldSecondsFor", () => {
  test("twice the time the blocks took lately, never less than the request's expiry", () => {
    assert.equal(heldSecondsFor(1_000, 2, 300), 4_000);
    assert.equal(heldSecondsFor(10, 2, 300), 300);
    assert.equal(heldSecondsFor(MAX_VALIDITY_BLOCKS, 12.05, 300), 2_410_000);
    assert.equal(heldSecondsFor(7, 0.25, 1), 4);
  });
});

/** A chain of blocks `secondsPerBlock` apart, up to `head`, that counts the reads. */
function fakeChain(head: bigint, secondsPerBlock: number) {
  const reads: (bigint | undefined)[] = [];
  const getBlock = async (number?: bigint): Promise<BlockStamp> => {
    reads.push(number);
    const n = number ?? head;
    return { number: n, timestamp: 1_700_000_000n + n * BigInt(secondsPerBlock) };
  };
  return { reads, getBlock };
}

describe("ChainHeads", () => {
  test("reads the head every time and the pace over 1,000 blocks once per ten minutes", async () => {
    let now = 0;
    const chain = fakeChain(5_000n, 2);
    const heads = new ChainHeads({}, { getBlock: chain.getBlock });
    assert.deepEqual(await heads.read(now), { ok: true, number: 5_000n, secondsPerBlock: 2 });
    assert.deepEqual(chain.reads, [undefined, 4_000n]);
    now += 9 * 60_000;
    await heads.read(now);
    assert.deepEqual(chain.reads, [undefined, 4_000n, undefined]);
    now += 2 * 60_000;
    await heads.read(now);
    assert.deepEqual(chain.reads, [undefined, 4_000n, undefined, undefined, 4_000n]);
  });

  test("concurrent reads share one call", async () => {
    const chain = fakeChain(10n, 1);
    const heads = new ChainHeads({}, { getBlock: chain.getBlock });
    const [a, b] = await Promise.all([heads.read(0), heads.read(0)]);
    assert.deepEqual(a, b);
    assert.deepEqual(chain.reads, [undefined, 0n]);
  });

  test("a young chain is measured from genesis, and a chain at genesis has no pace", async () => {
    assert.deepEqual(await new ChainHeads({}, { getBlock: fakeChain(40n, 3).getBlock }).read(0), {
      ok: true,
      number: 40n,
      secondsPerBlock: 3,
    });
    assert.deepEqual(await new ChainHeads({}, { getBlock: fakeChain(0n, 3).getBlock }).read(0), {
      ok: true,
      number: 0n,
      secondsPerBlock: 0,
    });
  });

  test("a failed read is an answer with the reason, never a throw", async () => {
    const heads = new ChainHeads(
      {},
      {
        getBlock: async () => {
          throw new Error("connection refused");
        },
      },
    );
    // The reason is the transport's own words when it has some; a bare error's message is not given out.
    assert.deepEqual(await heads.read(0), { ok: false, error: "an unexpected failure" });
  });
});

describe("planBlockWindow", () => {
  const chain = { chainId: 31337, name: "Local", heads: new ChainHeads({}, { getBlock: fakeChain(500n, 2).getBlock }) };
  const v09 = { version: { readsBlockWindows: true }, kind: { signsBlockWindows: true }, expirySeconds: 300 };

  test("is a window in blocks only when the paymaster asks, the version reads it and the kind signs it", async () => {
    assert.deepEqual(await planBlockWindow({ validityBlocks: 200 }, chain, v09, 0), {
      window: { validAfter: BLOCK_NUMBER_FLAG + 490, validUntil: BLOCK_NUMBER_FLAG + 700 },
      heldSeconds: 800,
    });
    assert.equal(await planBlockWindow({}, chain, v09, 0), undefined);
    const v08 = { ...v09, version: { readsBlockWindows: false } };
    assert.equal(await planBlockWindow({ validityBlocks: 200 }, chain, v08, 0), undefined);
    const token = { ...v09, kind: { signsBlockWindows: false } };
    assert.equal(await planBlockWindow({ validityBlocks: 200 }, chain, token, 0), undefined);
  });

  test("a chain without an RPC, or whose head cannot be read, is a refusal with the reason", async () => {
    assert.deepEqual(await planBlockWindow({ validityBlocks: 20 }, { chainId: 8453, name: "Base" }, v09, 0), {
      refusal: {
        reason:
          "The paymaster's signatures are valid for 20 blocks, but chain 8453 (Base) has no RPC to read its head from",
        refusedBy: "blockWindow",
      },
    });
    const dead = { chainId: 8453, name: "Base", rpcUrl: "http://127.0.0.1:9/" };
    const plan = await planBlockWindow({ validityBlocks: 20 }, dead, v09, 0);
    assert.ok(plan && "refusal" in plan);
    assert.match(
      plan.refusal.reason,
      /^The paymaster's signatures are valid for 20 blocks, but chain 8453's head block could not be read: /,
    );
  });
});
