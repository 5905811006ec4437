// EntryPoint v0.9 parallel signing's commitments (src/storage/signatureCommitments.ts) against the real database
// (PGlite, or PostgreSQL with DATABASE_URL): kept by (chain, EntryPoint, sender, nonce), replaced by a new commit,
// found only for the paymaster that made it and only until its validUntil, and dropped once expired.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { Database } from "../../src/storage/database";
import { type SignatureCommitment, SignatureCommitments } from "../../src/storage/signatureCommitments";
import { openTestDatabase } from "../helpers/database";
import { storedPaymaster } from "../helpers/storedPaymaster";

let db: Database;
before(async () => {
  db = await openTestDatabase();
});
after(() => db.close());

/** Makes each commitment's sender unique. */
let counter = 0;

async function paymasterId(): Promise<string> {
  return (await storedPaymaster(db, "commitments")).id;
}

const ENTRY_POINT = "0x433709009B8330FDa32311DF1C2AFA402eD8D009";
const hash = (digit: string) => `0x${digit.repeat(64)}` as const;
const signature = (digit: string) => `0x${digit.repeat(130)}` as const;

function commitment(id: string, overrides: Partial<SignatureCommitment> = {}): SignatureCommitment {
  return {
    chainId: 31337,
    entryPoint: ENTRY_POINT,
    sender: `0x${(++counter).toString(16).padStart(40, "0")}`,
    nonce: 5n,
    paymasterId: id,
    userOpHash: hash("a"),
    paymasterSignature: signature("1"),
    validUntil: 2_000,
    ...overrides,
  };
}

test("a commitment is found by its operation, the sender in any case, until its validUntil and not after", async () => {
  const store = new SignatureCommitments(db);
  const id = await paymasterId();
  const kept = commitment(id);
  await store.save(kept);
  const key = { ...kept, sender: kept.sender.toUpperCase().replace("0X", "0x") as `0x${string}` };
  assert.deepEqual(await store.find(key, 2_000), {
    userOpHash: kept.userOpHash,
    paymasterSignature: kept.paymasterSignature,
    validUntil: 2_000,
  });
  assert.equal(await store.find(key, 2_001), undefined, "past validUntil the commitment is dead");
  assert.equal(await store.find({ ...key, nonce: 6n }, 1_000), undefined, "another nonce");
  assert.equal(await store.find({ ...key, paymasterId: await paymasterId() }, 1_000), undefined, "another paymaster");
});

test("a new commit of the same operation replaces the old one; expired ones are dropped, live ones kept", async () => {
  const store = new SignatureCommitments(db);
  const id = await paymasterId();
  const first = commitment(id, { validUntil: 1_000 });
  await store.save(first);
  await store.save({ ...first, userOpHash: hash("b"), paymasterSignature: signature("2"), validUntil: 3_000 });
  assert.deepEqual(await store.find(first, 2_500), {
    userOpHash: hash("b"),
    paymasterSignature: signature("2"),
    validUntil: 3_000,
  });
  const dead = commitment(id, { validUntil: 100 });
  await store.save(dead);
  assert.ok((await store.dropExpired(2_000)) >= 1);
  const rows = await db.query<{ sender: string }>("SELECT sender FROM signature_commitments WHERE paymaster_id = $1", [
    id,
  ]);
  assert.deepEqual(
    rows.map((row) => row.sender),
    [first.sender.toLowerCase()],
  );
});
