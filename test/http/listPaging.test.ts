import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { insertContract } from "../../src/storage/contracts";
import { insertPolicy } from "../../src/storage/policies";
import { type Dapp, startTestApp, type TestApp } from "../helpers/app";

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

const ABI = '[{"type":"function","name":"ping","inputs":[],"outputs":[],"stateMutability":"nonpayable"}]';
const addressOf = (n: number) => `0x${n.toString(16).padStart(40, "0")}`;

async function addContract(dapp: Dapp, n: number) {
  const reply = await t.call("POST", "smart-contract", {
    token: dapp.token,
    apiKey: dapp.apiKey,
    body: { name: `c${n}`, address: addressOf(n), abi: ABI },
  });
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
}

async function addLimit(dapp: Dapp, n: number) {
  const reply = await t.call("POST", "paymaster-policy", {
    token: dapp.token,
    apiKey: dapp.apiKey,
    body: {
      name: `p${n}`,
      policyType: "PAYMASTER_SA_LIMIT",
      policyData: { type: "PAYMASTER", cycleDuration: "1 day", thresholdType: "COUNT", threshold: 10 },
    },
  });
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
}

const list = (dapp: Dapp, path: string, query?: Record<string, string>) =>
  t.call("GET", path, { token: dapp.token, apiKey: dapp.apiKey, query });

/** Reads every page of a list; `between` runs after each page but the last (e.g. to insert rows). */
async function allPages(dapp: Dapp, path: string, limit: number, between?: () => Promise<void>) {
  const seen: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  for (;;) {
    const reply = await list(dapp, path, cursor ? { limit: String(limit), cursor } : { limit: String(limit) });
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    const data = reply.body.data as { name: string }[];
    assert.ok(data.length <= limit);
    seen.push(...data.map((row) => row.name));
    pages++;
    assert.ok("nextCursor" in reply.body, "a paged answer always says whether more follow");
    if (reply.body.nextCursor === null) return { seen, pages };
    assert.equal(data.length, limit, "only the last page is short");
    cursor = reply.body.nextCursor as string;
    await between?.();
  }
}

describe("GET smart-contract in pages", () => {
  test("without limit or cursor the answer is the whole list, with no nextCursor", async () => {
    const dapp = await t.dapp();
    for (let n = 1; n <= 4; n++) await addContract(dapp, n);
    const reply = await list(dapp, "smart-contract");
    assert.equal(reply.status, 200);
    assert.deepEqual(Object.keys(reply.body).sort(), ["data", "message", "statusCode"]);
    assert.deepEqual(
      (reply.body.data as { name: string }[]).map((row) => row.name),
      ["c1", "c2", "c3", "c4"],
    );
  });

  test("pages cover every contract once, in order, and rows added meanwhile come at the end", async () => {
    const dapp = await t.dapp();
    for (let n = 1; n <= 7; n++) await addContract(dapp, n);
    let next = 8;
    // Two rows after each page: the list grows faster than it is read until the inserts stop at c13.
    const { seen, pages } = await allPages(dapp, "smart-contract", 3, async () => {
      for (let i = 0; i < 2 && next <= 13; i++) await addContract(dapp, next++);
    });
    assert.deepEqual(
      seen,
      Array.from({ length: 13 }, (_, i) => `c${i + 1}`),
    );
    assert.equal(pages, 5);
    // The page's rows are the whole list's rows, in the same shape.
    const whole = await list(dapp, "smart-contract");
    const first = await list(dapp, "smart-contract", { limit: "2" });
    assert.deepEqual(first.body.data, (whole.body.data as unknown[]).slice(0, 2));
  });

  test("rows created in the same instant (one transaction) are each read once", async () => {
    const dapp = await t.dapp();
    await t.db.transaction(async (tx) => {
      for (let n = 1; n <= 5; n++) {
        await insertContract(tx, {
          paymasterId: dapp.paymasterId,
          name: `c${n}`,
          address: addressOf(n),
          abi: ABI,
          methods: ["ping()"],
          whitelistedMethods: [],
        });
      }
    });
    const whole = (await list(dapp, "smart-contract")).body.data as { name: string }[];
    const { seen } = await allPages(dapp, "smart-contract", 1);
    assert.deepEqual(
      seen,
      whole.map((row) => row.name),
    );
    assert.equal(new Set(seen).size, 5);
  });

  test("a cursor alone pages by 100; an empty list is one empty last page", async () => {
    const dapp = await t.dapp();
    const empty = await list(dapp, "smart-contract", { limit: "5" });
    assert.deepEqual(empty.body, {
      statusCode: 200,
      message: "Smart contract list fetched",
      data: [],
      nextCursor: null,
    });
    for (let n = 1; n <= 3; n++) await addContract(dapp, n);
    const first = await list(dapp, "smart-contract", { limit: "1" });
    const rest = await list(dapp, "smart-contract", { cursor: first.body.nextCursor as string });
    assert.deepEqual(
      (rest.body.data as { name: string }[]).map((row) => row.name),
      ["c2", "c3"],
    );
    assert.equal(rest.body.nextCursor, null);
  });

  test("a bad limit or cursor is a 400 naming the field", async () => {
    const dapp = await t.dapp();
    await addLimit(dapp, 1);
    const policyCursor = (await list(dapp, "paymaster-policy", { limit: "1" })).body.nextCursor;
    assert.equal(policyCursor, null);
    const cases: [Record<string, string>, string][] = [
      [{ limit: "0" }, "limit must be a whole number from 1 to 500"],
      [{ limit: "501" }, "limit must be a whole number from 1 to 500"],
      [{ limit: "ten" }, "limit must be a whole number from 1 to 500"],
      [{ limit: "05" }, "limit must be a whole number from 1 to 500"],
      [{ cursor: "not a cursor!" }, "cursor must be the nextCursor of a previous page of this list"],
      [{ cursor: Buffer.from("c.12.x").toString("base64url") }, "cursor must be the nextCursor"],
      [
        { cursor: Buffer.from(`c.99999999999999999999.${crypto.randomUUID()}`).toString("base64url") },
        "cursor must be the nextCursor",
      ],
      // A cursor of the rule list's rules part means nothing in the contract list.
      [{ cursor: Buffer.from(`p.1.${crypto.randomUUID()}`).toString("base64url") }, "cursor must be the nextCursor"],
    ];
    for (const [query, message] of cases) {
      const reply = await list(dapp, "smart-contract", query);
      assert.equal(reply.status, 400, JSON.stringify(query));
      assert.ok(String(reply.body.message).includes(message), `${JSON.stringify(query)}: ${reply.body.message}`);
    }
  });

  test("a cursor far in the past or future is read, not refused", async () => {
    const dapp = await t.dapp();
    await addContract(dapp, 1);
    const past = Buffer.from(`c.0.${"0".repeat(8)}-0000-0000-0000-${"0".repeat(12)}`).toString("base64url");
    const future = Buffer.from(`c.253402300799999999.${crypto.randomUUID()}`).toString("base64url");
    assert.equal(((await list(dapp, "smart-contract", { cursor: past })).body.data as unknown[]).length, 1);
    assert.deepEqual((await list(dapp, "smart-contract", { cursor: future })).body.data, []);
  });
});

describe("GET paymaster-policy in pages", () => {
  test("pages run through the rules and then the contracts, each once, as the whole list orders them", async () => {
    const dapp = await t.dapp();
    for (let n = 1; n <= 4; n++) await addLimit(dapp, n);
    for (let n = 1; n <= 3; n++) await addContract(dapp, n);
    const whole = await list(dapp, "paymaster-policy");
    assert.deepEqual(Object.keys(whole.body).sort(), ["data", "message", "statusCode"]);
    const wholeNames = (whole.body.data as { name: string }[]).map((row) => row.name);
    assert.deepEqual(wholeNames, ["p1", "p2", "p3", "p4", "c1", "c2", "c3"]);
    for (const limit of [1, 2, 3, 4, 7, 500]) {
      assert.deepEqual((await allPages(dapp, "paymaster-policy", limit)).seen, wholeNames, `limit ${limit}`);
    }
    // A rule added while paging through the contracts is not in the later pages (rules come first), but a contract is.
    let step = 0;
    const { seen } = await allPages(dapp, "paymaster-policy", 5, async () => {
      if (step++ === 0) {
        await addLimit(dapp, 5);
        await addContract(dapp, 4);
      }
    });
    assert.deepEqual(seen, [...wholeNames, "c4"]);
    const page = await list(dapp, "paymaster-policy", { limit: "5" });
    assert.deepEqual(page.body.data, ((await list(dapp, "paymaster-policy")).body.data as unknown[]).slice(0, 5));
  });

  test("a page ending on the last rule reads on into the contracts", async () => {
    const dapp = await t.dapp();
    await insertPolicy(t.db, {
      paymasterId: dapp.paymasterId,
      createdBy: dapp.accountId,
      name: "deploy",
      policyType: "WALLET_DEPLOYMENT",
      policyData: {},
      cycleStartMs: null,
    });
    const onlyRule = await list(dapp, "paymaster-policy", { limit: "1" });
    assert.equal(onlyRule.body.nextCursor, null, "no contracts: nothing follows");
    await addContract(dapp, 1);
    const first = await list(dapp, "paymaster-policy", { limit: "1" });
    assert.equal(typeof first.body.nextCursor, "string");
    const second = await list(dapp, "paymaster-policy", { cursor: first.body.nextCursor as string });
    assert.deepEqual(
      (second.body.data as { policyType: string }[]).map((row) => row.policyType),
      ["WHITELISTED_CONTRACT"],
    );
    assert.equal(second.body.nextCursor, null);
  });
});

test("on the embedded database the growing contracts table is analyzed, so pages after a cursor walk the index", async (context) => {
  if (t.db.kind !== "pglite") return context.skip("PostgreSQL analyzes on its own");
  const dapp = await t.dapp();
  // The first contract written by this process reads the table's last statistics; nothing is written before.
  for (let n = 1; n <= 60; n++) await addContract(dapp, 1_000_000 + n);
  let analyzed: { attname: string }[] = [];
  for (let tries = 0; tries < 50 && analyzed.length === 0; tries++) {
    analyzed = await t.db.query<{ attname: string }>(
      "SELECT attname FROM pg_stats WHERE tablename = 'smart_contracts' ORDER BY attname",
    );
    if (analyzed.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
  }
  assert.deepEqual(
    analyzed.map((row) => row.attname),
    ["created_at", "id", "paymaster_id"],
    "the page key's columns only",
  );
  const [table] = await t.db.query<{ rows: number }>(
    "SELECT reltuples::int AS rows FROM pg_class WHERE oid = 'smart_contracts'::regclass",
  );
  assert.ok((table?.rows ?? 0) >= 1, `reltuples ${table?.rows}`);
});
