// The OP-stack operator fee's reading is kept a minute by the clock the caller gives (the service's context's `now`),
// not by the wall clock: a test that moves the service's clock sees the fee read again, and one that holds it still
// sees the kept reading. The oracle is a stand-in on anvil whose every function answers what one storage slot holds,
// so the test changes the fee by writing that slot, while getL1Fee, never kept, shows each reading reached the node.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { type Address, createPublicClient, createTestClient, http, type PublicClient, toHex } from "viem";
import { readL1Fee } from "../../src/chain/l1DataFee";
import { type Anvil, startAnvil } from "../helpers/anvil";

const ORACLE: Address = "0x00000000000000000000000000000000000a11ce";
/** PUSH1 0 SLOAD PUSH1 0 MSTORE PUSH1 32 PUSH1 0 RETURN: any call gets slot 0 as one uint256. */
const SLOT_ZERO_ANSWER = "0x60005460005260206000f3";
const MODEL = { model: "op-stack", oracle: ORACLE, marginPercent: 0, source: "chains file" } as const;
const QUESTION = { transaction: "0x02c0", to: "0x0000000071727De22E5E9d8BAf0edAc6f37da032" } as const;
const TTL_MS = 60_000;

let anvil: Anvil;
let client: PublicClient;
let setAnswer: (wei: bigint) => Promise<void>;

before(async () => {
  anvil = await startAnvil();
  client = createPublicClient({ transport: http(anvil.rpcUrl) });
  const testClient = createTestClient({ mode: "anvil", transport: http(anvil.rpcUrl) });
  await testClient.setCode({ address: ORACLE, bytecode: SLOT_ZERO_ANSWER });
  setAnswer = (wei) =>
    testClient.setStorageAt({ address: ORACLE, index: toHex(0, { size: 32 }), value: toHex(wei, { size: 32 }) });
});

after(() => anvil?.stop());

async function reading(nowMs: number) {
  const fee = await readL1Fee(client, MODEL, QUESTION, nowMs);
  assert.equal(fee.model, "op-stack");
  return { l1FeeWei: fee.l1FeeWei, operatorFeeWei: fee.operatorFee.constantWei };
}

test("the operator fee is read again once the given clock is a minute on, whatever the wall clock says", async () => {
  // A clock far from the wall clock's: were the wall clock read anywhere, the cache would not follow these steps.
  const start = Date.UTC(2031, 0, 1);
  await setAnswer(100n);
  assert.deepEqual(await reading(start), { l1FeeWei: 100n, operatorFeeWei: 100n });

  await setAnswer(200n);
  assert.deepEqual(
    await reading(start + TTL_MS - 1),
    { l1FeeWei: 200n, operatorFeeWei: 100n },
    "within the minute the operator fee is the kept reading; the L1 fee is read every time",
  );
  assert.deepEqual(
    await reading(start + TTL_MS),
    { l1FeeWei: 200n, operatorFeeWei: 200n },
    "a minute on by the given clock, within milliseconds of wall time, the operator fee is read again",
  );

  await setAnswer(300n);
  assert.deepEqual(
    await reading(start + TTL_MS + 1),
    { l1FeeWei: 300n, operatorFeeWei: 200n },
    "the new reading is kept from the time it was made",
  );
});
