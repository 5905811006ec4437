// Times a client sends (a token's expiresAt through the API, the account command's route and the account command on
// the database; the audit log's from and to) must name an instant that exists. Date.parse rolls an impossible date
// over (2030-02-30 became 2030-03-02, stored silently) and refuses others without naming the field; each is a 400
// that names the field and what does not exist, from one check (src/schemas/management/isoTime.ts).
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { createToken } from "../../src/actions/tokens";
import { ApiError } from "../../src/errors";
import { ADMIN_SECRET_HEADER } from "../../src/http/admin";
import { isoTimeMs } from "../../src/schemas/management/isoTime";
import { startTestApp, type TestApp } from "../helpers/app";

const SECRET = "admin-secret-for-impossible-dates";
let t: TestApp;
before(async () => {
  t = await startTestApp({ adminSecret: SECRET });
});
after(() => t.close());

/** Times that do not exist, and the end of the message each gets after "<field> must be a time that exists: ". */
const IMPOSSIBLE: [string, string][] = [
  ["2030-02-30T00:00:00Z", "2030-02 has 28 days"],
  ["2028-02-30T00:00:00Z", "2028-02 has 29 days"],
  ["2030-04-31T12:00:00+02:00", "2030-04 has 30 days"],
  ["2030-13-01T00:00:00Z", "month 13 does not exist (01 to 12)"],
  ["2030-00-10T00:00:00Z", "month 00 does not exist (01 to 12)"],
  ["2030-01-00T00:00:00Z", "day 00 does not exist"],
  ["2030-01-01T24:00:00Z", "hour 24 does not exist (00 to 23)"],
  ["2030-01-01T23:60Z", "minute 60 does not exist (00 to 59)"],
  ["2030-01-01T23:59:60Z", "second 60 does not exist (00 to 59)"],
  ["2030-01-01T00:00:00+24:00", "offset +24:00 does not exist (hours 00 to 23, minutes 00 to 59)"],
];
const exists = (field: string, reason: string) => `${field} must be a time that exists: ${reason}`;

test("the one check: instants that exist are read as Date.parse reads them, others are a 400 naming the field", () => {
  for (const text of ["2028-02-29T00:00:00Z", "2030-12-31T23:59:59.999+14:00", "2030-01-01T00:00-05:30"]) {
    assert.equal(isoTimeMs("at", text), Date.parse(text), text);
  }
  for (const [text, reason] of IMPOSSIBLE) {
    assert.throws(() => isoTimeMs("at", text), new ApiError(400, exists("at", reason)), text);
  }
  assert.throws(
    () => isoTimeMs("at", "tomorrow"),
    new ApiError(400, "at must be an ISO 8601 time with its offset, like 2026-12-31T23:59:59Z"),
  );
});

test("POST tokens: an impossible expiresAt is a 400 naming it, and no token is made", async () => {
  const { token } = await t.account();
  for (const [expiresAt, reason] of IMPOSSIBLE) {
    const reply = await t.call("POST", "tokens", { token, body: { name: "x", scope: "read", expiresAt } });
    assert.deepEqual([reply.status, reply.body.message], [400, exists("expiresAt", reason)], expiresAt);
  }
  const list = await t.call("GET", "tokens", { token });
  assert.equal((list.body.data as unknown[]).length, 1, "only the first token");
  const leap = await t.call("POST", "tokens", {
    token,
    body: { name: "leap", scope: "read", expiresAt: "2028-02-29T00:00:00Z" },
  });
  assert.equal((leap.body.data as { expiresAt: string }).expiresAt, "2028-02-29T00:00:00.000Z");
});

test("the account command: through the running service's route and on the database, the same 400", async () => {
  const account = await t.account();
  for (const [expiresAt, reason] of IMPOSSIBLE) {
    const reply = await t.app.inject({
      method: "POST",
      url: `/internal/accounts/${account.id}/tokens`,
      headers: { [ADMIN_SECRET_HEADER]: SECRET, "content-type": "application/json" },
      payload: JSON.stringify({ name: "x", scope: "read", expiresAt }),
    });
    assert.deepEqual([reply.statusCode, reply.json().message], [400, exists("expiresAt", reason)], expiresAt);
    await assert.rejects(
      createToken({ db: t.db, now: Date.now }, account.id, { name: "x", scope: "read", expiresAt }),
      new ApiError(400, exists("expiresAt", reason)),
      expiresAt,
    );
  }
  await assert.rejects(
    createToken({ db: t.db, now: Date.now }, account.id, { name: "x", scope: "read", expiresAt: "2030-02-30" }),
    new ApiError(400, "expiresAt must be an ISO 8601 time with its offset, like 2026-12-31T23:59:59Z"),
  );
});

test("GET audit-log: an impossible from or to is a 400 naming it", async () => {
  const { token } = await t.account();
  for (const field of ["from", "to"]) {
    for (const [value, reason] of IMPOSSIBLE) {
      const reply = await t.call("GET", "audit-log", { token, query: { [field]: value } });
      assert.deepEqual([reply.status, reply.body.message], [400, exists(field, reason)], `${field}=${value}`);
    }
  }
  const fine = await t.call("GET", "audit-log", { token, query: { from: "2028-02-29T00:00:00Z" } });
  assert.equal(fine.status, 200);
});
