import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { ADMIN_SECRET_HEADER } from "../../src/http/admin";
import { startTestApp, type TestApp } from "../helpers/app";

/** The account command's route: the secret is checked before the body, and the body by its schema. */
const SECRET = "admin-secret-for-tests";
let t: TestApp;
/** The service's clock, which a test may set; the wall clock until then. */
let clockMs: number | undefined;
before(async () => {
  t = await startTestApp({ adminSecret: SECRET, now: () => clockMs ?? Date.now() });
});
after(() => t.close());

const post = (headers: Record<string, string>, body: unknown) =>
  t.app.inject({
    method: "POST",
    url: "/internal/accounts",
    headers: { ...headers, "content-type": "application/json" },
    payload: JSON.stringify(body),
  });

test("with the secret, a name creates an account and returns its token once", async () => {
  const reply = await post({ [ADMIN_SECRET_HEADER]: SECRET }, { name: "team" });
  assert.equal(reply.statusCode, 200);
  const data = reply.json().data as { name: string; authToken: string };
  assert.equal(data.name, "team");
  assert.match(data.authToken, /^pm_/);
});

test("without the right secret the answer is 403, whatever the body", async () => {
  for (const headers of [{}, { [ADMIN_SECRET_HEADER]: "wrong" }] as Record<string, string>[]) {
    for (const body of [{ name: "x" }, { name: 5 }, [1]]) {
      const reply = await post(headers, body);
      assert.deepEqual([reply.statusCode, reply.json()], [403, { statusCode: 403, message: "Forbidden" }]);
    }
  }
});

test("with the secret, a bad body names the field", async () => {
  for (const [body, message] of [
    [{}, "name is required"],
    [{ name: 5 }, "name must be a string"],
    [{ name: " " }, "name must not be empty"],
    [[1], "Request body must be a JSON object"],
  ] as const) {
    const reply = await post({ [ADMIN_SECRET_HEADER]: SECRET }, body);
    assert.deepEqual([reply.statusCode, reply.json()], [400, { statusCode: 400, message }]);
  }
});

test("an account's first token is dated by the service's clock, when the account is made and when it is rotated", async () => {
  const admin = { [ADMIN_SECRET_HEADER]: SECRET };
  const firstTokenCreatedAt = async (id: string) => {
    const reply = await t.app.inject({ method: "GET", url: `/internal/accounts/${id}/tokens`, headers: admin });
    const tokens = reply.json().data as { first: boolean; createdAt: string }[];
    return tokens.find((token) => token.first)?.createdAt;
  };
  clockMs = Date.UTC(2031, 4, 1, 12);
  try {
    const made = await post(admin, { name: "dated" });
    const { id } = made.json().data as { id: string };
    assert.equal(await firstTokenCreatedAt(id), "2031-05-01T12:00:00.000Z");
    clockMs += 60 * 60 * 1000;
    const rotated = await t.app.inject({ method: "POST", url: `/internal/accounts/${id}/token`, headers: admin });
    assert.equal(rotated.statusCode, 200);
    assert.equal(await firstTokenCreatedAt(id), "2031-05-01T13:00:00.000Z");
  } finally {
    clockMs = undefined;
  }
});
