// EntryPoint v0.9 parallel signing's commitments (src/storage/signatureCommitments.ts) against the real database
// (PGlite, or PostgreSQL with DATABASE_URL): kept by (chain, EntryPoint, sender, nonce, paymaster), replaced by the same
// paymaster's new commit and left alone by another paymaster's, found only for the paymaster that made it and only
// until its validUntil, and dropped once expired. Migration 27 widened the key and kept the rows already stored.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, test } from "node:test";
import { type Database, openDatabase } from "../../src/storage/database";
import { migrate } from "../../src/storage/migrations";
import { type SignatureCommitment, SignatureCommitments } from "../../src/storage/signatureCommitments";
import { openTestDatabase, testDatabaseUrl } from "../helpers/database";
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

test("two paymasters' commitments for one operation live side by side; each replaces only its own", async () => {
  const store = new SignatureCommitments(db);
  const [mine, theirs] = [await paymasterId(), await paymasterId()];
  const first = commitment(mine);
  await store.save(first);
  await store.save({ ...first, paymasterId: theirs, userOpHash: hash("c"), paymasterSignature: signature("3") });
  assert.deepEqual(await store.find(first, 1_000), {
    userOpHash: first.userOpHash,
    paymasterSignature: first.paymasterSignature,
    validUntil: 2_000,
  });
  await store.save({ ...first, paymasterId: theirs, userOpHash: hash("d"), paymasterSignature: signature("4") });
  assert.equal((await store.find({ ...first, paymasterId: theirs }, 1_000))?.paymasterSignature, signature("4"));
  assert.equal((await store.find(first, 1_000))?.paymasterSignature, signature("1"), "still the first paymaster's");
});

/** A database of its own, migrated up to `lastId` only: a new PGlite, or a new schema of DATABASE_URL's PostgreSQL. */
async function databaseAt(lastId: number): Promise<Database> {
  const url = testDatabaseUrl();
  if (!url) {
    const fresh = await openDatabase({});
    await migrate(fresh, lastId);
    return fresh;
  }
  const schema = `test_${randomBytes(6).toString("hex")}`;
  const admin = await openDatabase({ url });
  await admin.exec(`CREATE SCHEMA ${schema}`);
  const fresh = await openDatabase({ url, schema });
  await migrate(fresh, lastId);
  return {
    ...fresh,
    async close() {
      await fresh.close();
      await admin.exec(`DROP SCHEMA ${schema} CASCADE`);
      await admin.close();
    },
  };
}

test("migration 27 keeps the commitments stored before it, found as before, and lets another paymaster's join", async () => {
  const old = await databaseAt(26);
  try {
    const ids = [(await storedPaymaster(old, "before 27")).id, (await storedPaymaster(old, "after 27")).id];
    const kept = commitment(ids[0] as string);
    // As the build before migration 27 wrote it (its upsert named the old key, which this build's no longer matches).
    await old.query(
      `INSERT INTO signature_commitments
         (chain_id, entry_point, sender, nonce, paymaster_id, user_op_hash, paymaster_signature, valid_until)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [
        31337,
        ENTRY_POINT.toLowerCase(),
        kept.sender,
        "5",
        kept.paymasterId,
        kept.userOpHash,
        kept.paymasterSignature,
        2_000,
      ],
    );
    await migrate(old);
    const store = new SignatureCommitments(old);
    assert.deepEqual(await store.find(kept, 1_000), {
      userOpHash: kept.userOpHash,
      paymasterSignature: kept.paymasterSignature,
      validUntil: kept.validUntil,
    });
    await store.save({ ...kept, paymasterId: ids[1] as string, paymasterSignature: signature("5") });
    assert.equal((await store.find(kept, 1_000))?.paymasterSignature, kept.paymasterSignature);
  } finally {
    await old.close();
  }
});
