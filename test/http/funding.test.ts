import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { keccak256, toBytes } from "viem";
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from "viem/accounts";
import { type Dapp, startTestApp, type TestApp } from "../helpers/app";
import { missingCredentials } from "../helpers/badCredentials";

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

const PATHS = ["paymasterParameters", "paymaster"] as const;
const MISSING = "Auth token and API key is required in the headers";
const ADDRESS_MESSAGE = "address must be an address: 0x followed by 40 hex digits";
/** The PATCH body's kinds, in the order the schema's union lists them (its message names them so). */
const UPDATE_TYPES =
  "paymasterFundingId, active, depositAlert, sponsorInfo, allowedOrigins, validityBlocks, rotateApiKey";

const wallet = (): PrivateKeyAccount => privateKeyToAccount(generatePrivateKey());
const as = (dapp: Dapp) => ({ token: dapp.token, apiKey: dapp.apiKey });

interface PaymasterView {
  name: string;
  chainId: number;
  apiKey: string;
  paymasterId: string;
  fundingWalletAddress: string | null;
  active: boolean;
}

/** Step 1: a new funding message for the dApp's paymaster. */
async function fundingMessage(dapp: Dapp): Promise<string> {
  const reply = await t.call("GET", `funding-message/${dapp.paymasterId}`, as(dapp));
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  assert.equal(reply.body.message, "Funding message sent");
  const data = reply.body.data as { fundingMessage: string };
  assert.deepEqual(Object.keys(data), ["fundingMessage"]);
  assert.equal(typeof data.fundingMessage, "string");
  return data.fundingMessage;
}

/** Step 3's body for a signature made by `signer` over `message`, naming `address` (by default the signer's). */
async function fundingBody(dapp: Dapp, signer: PrivateKeyAccount, message: string, address = signer.address) {
  return {
    paymasterId: dapp.paymasterId,
    type: "paymasterFundingId",
    signature: await signer.signMessage({ message }),
    address,
  };
}

/** Every paymaster of the dApp's account, as endpoint 1 shows them. */
async function paymasters(dapp: Dapp): Promise<PaymasterView[]> {
  const reply = await t.call("GET", "paymasterParameters", { token: dapp.token });
  assert.equal(reply.status, 200);
  return reply.body.data as PaymasterView[];
}

async function fundingWalletOf(dapp: Dapp): Promise<string | null | undefined> {
  return (await paymasters(dapp)).find((p) => p.paymasterId === dapp.paymasterId)?.fundingWalletAddress;
}

async function linked(dapp: Dapp, body: unknown, path: string = PATHS[0]): Promise<PaymasterView> {
  const reply = await t.call("PATCH", path, { ...as(dapp), body });
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  assert.equal(reply.body.statusCode, 200);
  assert.equal(reply.body.message, "Paymaster updated successfully");
  return reply.body.data as PaymasterView;
}

/** A PATCH that must be refused exactly so, leaving every paymaster of the account as it was. */
async function refused(
  dapp: Dapp,
  options: { body?: unknown; token?: string; apiKey?: string; path?: string },
  status: number,
  message: string,
): Promise<void> {
  const before = await paymasters(dapp);
  const { path = PATHS[0], ...rest } = options;
  const reply = await t.call("PATCH", path, { ...as(dapp), ...rest });
  assert.deepEqual([reply.status, reply.body], [status, { statusCode: status, message }]);
  assert.deepEqual(await paymasters(dapp), before, "a refused update writes nothing");
}

describe("funding message (step 1)", () => {
  test("names the paymaster, is dated, and is new on every GET", async () => {
    const dapp = await t.dapp({ name: "funding-game" });
    const first = await fundingMessage(dapp);
    const second = await fundingMessage(dapp);
    assert.notEqual(first, second);
    for (const message of [first, second]) {
      assert.ok(message.includes("funding-game"), message);
      assert.ok(message.includes(dapp.paymasterId), message);
      assert.match(message, /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}/);
    }
  });

  test("the success body is exactly the envelope with data {fundingMessage}", async () => {
    const dapp = await t.dapp();
    const reply = await t.call("GET", `funding-message/${dapp.paymasterId}`, as(dapp));
    assert.deepEqual(Object.keys(reply.body).sort(), ["data", "message", "statusCode"]);
    assert.equal(reply.body.statusCode, 200);
  });

  test("a paymasterId that is not the apiKey's paymaster is 404 `Paymaster not found`", async () => {
    const dapp = await t.dapp();
    const sibling = await t.dapp({ token: dapp.token });
    const foreign = await t.dapp();
    for (const id of [sibling.paymasterId, foreign.paymasterId, randomUUID(), "abc", "x".repeat(300), dapp.apiKey]) {
      const reply = await t.call("GET", `funding-message/${encodeURIComponent(id)}`, as(dapp));
      assert.deepEqual([reply.status, reply.body], [404, { statusCode: 404, message: "Paymaster not found" }], id);
    }
  });

  test("missing or unknown headers get 401", async () => {
    const dapp = await t.dapp();
    for (const headers of [
      {},
      { token: dapp.token },
      { apiKey: dapp.apiKey },
      { token: "pm_unknown", apiKey: dapp.apiKey },
      { token: dapp.token, apiKey: "unknown" },
    ]) {
      const reply = await t.call("GET", `funding-message/${dapp.paymasterId}`, headers);
      assert.deepEqual([reply.status, reply.body], [401, { statusCode: 401, message: MISSING }]);
    }
  });
});

describe("link the funding wallet (step 3)", () => {
  for (const path of PATHS) {
    test(`PATCH ${path}: a signature of the latest message links the signer; the list shows it lowercased`, async () => {
      const dapp = await t.dapp({ name: `fund-${path}` });
      const signer = wallet();
      const message = await fundingMessage(dapp);
      assert.equal(await fundingWalletOf(dapp), null);
      const data = await linked(dapp, await fundingBody(dapp, signer, message), path);
      assert.deepEqual(data, {
        name: `fund-${path}`,
        chainId: dapp.chainId,
        apiKey: dapp.apiKey,
        paymasterId: dapp.paymasterId,
        fundingWalletAddress: signer.address.toLowerCase(),
        active: true,
        sponsor: null,
        allowedOrigins: [],
        validityBlocks: null,
        requireOrigin: false,
      });
      assert.notEqual(signer.address, signer.address.toLowerCase(), "the signer's address is checksummed");
      assert.equal(await fundingWalletOf(dapp), signer.address.toLowerCase());
    });
  }

  test("the address may be sent in any letter case", async () => {
    const dapp = await t.dapp();
    const signer = wallet();
    const message = await fundingMessage(dapp);
    const upper = `0x${signer.address.slice(2).toUpperCase()}` as const;
    const data = await linked(dapp, await fundingBody(dapp, signer, message, upper));
    assert.equal(data.fundingWalletAddress, signer.address.toLowerCase());
  });

  test("the funding wallet can be replaced later with a new message, and only that paymaster changes", async () => {
    const dapp = await t.dapp();
    const sibling = await t.dapp({ token: dapp.token });
    const [first, second] = [wallet(), wallet()];
    await linked(dapp, await fundingBody(dapp, first, await fundingMessage(dapp)));
    await linked(dapp, await fundingBody(dapp, second, await fundingMessage(dapp)));
    assert.equal(await fundingWalletOf(dapp), second.address.toLowerCase());
    assert.equal(await fundingWalletOf(sibling), null);
  });

  test("only the latest message is accepted: a signature of an older one is `Invalid signature`", async () => {
    const dapp = await t.dapp();
    const signer = wallet();
    const older = await fundingMessage(dapp);
    const latest = await fundingMessage(dapp);
    await refused(dapp, { body: await fundingBody(dapp, signer, older) }, 400, "Invalid signature");
    await linked(dapp, await fundingBody(dapp, signer, latest));
    assert.equal(await fundingWalletOf(dapp), signer.address.toLowerCase());
  });

  test("a message fetched after signing makes the signed one stale", async () => {
    const dapp = await t.dapp();
    const signer = wallet();
    const body = await fundingBody(dapp, signer, await fundingMessage(dapp));
    await fundingMessage(dapp);
    await refused(dapp, { body }, 400, "Invalid signature");
  });

  test("a signature by another key than `address` is `Invalid signature`, and does not use up the message", async () => {
    const dapp = await t.dapp();
    const [owner, intruder] = [wallet(), wallet()];
    const message = await fundingMessage(dapp);
    // Signed by the intruder, naming the owner.
    await refused(dapp, { body: await fundingBody(dapp, intruder, message, owner.address) }, 400, "Invalid signature");
    // Signed by the owner, naming the intruder.
    await refused(dapp, { body: await fundingBody(dapp, owner, message, intruder.address) }, 400, "Invalid signature");
    await linked(dapp, await fundingBody(dapp, owner, message));
    assert.equal(await fundingWalletOf(dapp), owner.address.toLowerCase());
  });

  test("a signature over other text than the message is `Invalid signature`", async () => {
    const dapp = await t.dapp();
    const signer = wallet();
    const message = await fundingMessage(dapp);
    for (const text of [`${message} `, message.toUpperCase(), "link my wallet"]) {
      await refused(dapp, { body: await fundingBody(dapp, signer, text) }, 400, "Invalid signature");
    }
    // A signature of the message's plain keccak256, without the EIP-191 prefix, is not personal_sign.
    const unprefixed = await signer.sign({ hash: keccak256(toBytes(message)) });
    await refused(
      dapp,
      { body: { ...(await fundingBody(dapp, signer, message)), signature: unprefixed } },
      400,
      "Invalid signature",
    );
    await linked(dapp, await fundingBody(dapp, signer, message));
  });

  test("another dApp's message, signed, is not accepted for this dApp", async () => {
    const dapp = await t.dapp();
    const other = await t.dapp({ token: dapp.token });
    const signer = wallet();
    await fundingMessage(dapp);
    const otherMessage = await fundingMessage(other);
    await refused(dapp, { body: await fundingBody(dapp, signer, otherMessage) }, 400, "Invalid signature");
  });

  test("without any message requested, any signature is `Invalid signature`", async () => {
    const dapp = await t.dapp();
    const signer = wallet();
    await refused(dapp, { body: await fundingBody(dapp, signer, "anything") }, 400, "Invalid signature");
    await refused(dapp, { body: await fundingBody(dapp, signer, "") }, 400, "Invalid signature");
  });

  test("a signature cannot be replayed: the message is used up by the update", async () => {
    const dapp = await t.dapp();
    const [first, second] = [wallet(), wallet()];
    const message = await fundingMessage(dapp);
    const body = await fundingBody(dapp, first, message);
    await linked(dapp, body);
    await refused(dapp, { body }, 400, "Invalid signature");
    await refused(dapp, { body, path: "paymaster" }, 400, "Invalid signature");
    // Nor can another wallet sign the used message.
    await refused(dapp, { body: await fundingBody(dapp, second, message) }, 400, "Invalid signature");
    assert.equal(await fundingWalletOf(dapp), first.address.toLowerCase());
  });

  test("the same signature sent concurrently links once; the other requests are `Invalid signature`", async () => {
    const dapp = await t.dapp();
    const [first, second] = [wallet(), wallet()];
    const message = await fundingMessage(dapp);
    const bodies = [await fundingBody(dapp, first, message), await fundingBody(dapp, second, message)];
    const replies = await Promise.all(
      [0, 1, 2, 3, 4, 5].map((i) =>
        t.call("PATCH", i % 2 ? "paymaster" : "paymasterParameters", { ...as(dapp), body: bodies[i % 2] }),
      ),
    );
    const winners = replies.filter((reply) => reply.status === 200);
    assert.equal(winners.length, 1, JSON.stringify(replies.map((reply) => reply.body)));
    for (const reply of replies.filter((r) => r.status !== 200)) {
      assert.deepEqual([reply.status, reply.body], [400, { statusCode: 400, message: "Invalid signature" }]);
    }
    const winner = winners[0]?.body.data as PaymasterView | undefined;
    assert.ok(winner);
    assert.equal(await fundingWalletOf(dapp), winner.fundingWalletAddress);
  });

  test("signatures that are not valid ECDSA signatures are `Invalid signature`, not a 500", async () => {
    const dapp = await t.dapp();
    const signer = wallet();
    const message = await fundingMessage(dapp);
    const good = await signer.signMessage({ message });
    for (const signature of [
      "0x",
      "0x1234",
      "0x123",
      good.slice(0, -2),
      `${good}00`,
      `0x${"00".repeat(65)}`,
      `0x${"ff".repeat(65)}`,
      `${good.slice(0, -2)}05`,
    ]) {
      await refused(
        dapp,
        { body: { ...(await fundingBody(dapp, signer, message)), signature } },
        400,
        "Invalid signature",
      );
    }
    await linked(dapp, {
      ...(await fundingBody(dapp, signer, message)),
      signature: good.toUpperCase().replace("0X", "0x"),
    });
  });

  const valid = {
    paymasterId: randomUUID(),
    type: "paymasterFundingId",
    signature: `0x${"11".repeat(65)}`,
    address: `0x${"22".repeat(20)}`,
  };
  for (const [field, value, message] of [
    ["paymasterId", undefined, "paymasterId is required"],
    ["paymasterId", null, "paymasterId is required"],
    ["paymasterId", 7, "paymasterId must be a string"],
    ["paymasterId", "", "paymasterId must not be empty"],
    ["type", undefined, "type is required"],
    ["type", 1, `type must be one of ${UPDATE_TYPES}`],
    ["type", "paymasterFunding", `type must be one of ${UPDATE_TYPES}`],
    ["type", "PAYMASTERFUNDINGID", `type must be one of ${UPDATE_TYPES}`],
    ["signature", undefined, "signature is required"],
    ["signature", 123, "signature must be a string"],
    ["signature", "", "signature must not be empty"],
    ["signature", "deadbeef", "signature must be a 0x-prefixed hex string"],
    ["signature", "0xnothex", "signature must be a 0x-prefixed hex string"],
    ["signature", ` 0x${"11".repeat(65)}`, "signature must be a 0x-prefixed hex string"],
    ["signature", `0x${"1".repeat(1001)}`, "signature must be at most 1000 characters"],
    ["address", undefined, "address is required"],
    ["address", "0x1234", ADDRESS_MESSAGE],
    ["address", 42, ADDRESS_MESSAGE],
    ["address", `0x${"zz".repeat(20)}`, ADDRESS_MESSAGE],
  ] as const) {
    test(`bad input: ${field} = ${JSON.stringify(value)?.slice(0, 24)} → "${message}"`, async () => {
      const dapp = await t.dapp();
      const signer = wallet();
      const message0 = await fundingMessage(dapp);
      const body = { ...(await fundingBody(dapp, signer, message0)), [field]: value };
      await refused(dapp, { body }, 400, message);
      // The refusal did not use up the message.
      await linked(dapp, await fundingBody(dapp, signer, message0));
    });
  }
  test("a body that is not a JSON object is refused", async () => {
    const dapp = await t.dapp();
    for (const body of [[valid], "text", 1, undefined]) {
      await refused(dapp, { body }, 400, "Request body must be a JSON object");
    }
  });

  test("a paymasterId in the body that is not the apiKey's paymaster is 404 `Paymaster not found`", async () => {
    const dapp = await t.dapp();
    const sibling = await t.dapp({ token: dapp.token });
    const foreign = await t.dapp();
    const signer = wallet();
    const message = await fundingMessage(dapp);
    const body = await fundingBody(dapp, signer, message);
    for (const paymasterId of [sibling.paymasterId, foreign.paymasterId, randomUUID(), "not-a-uuid", dapp.apiKey]) {
      await refused(dapp, { body: { ...body, paymasterId } }, 404, "Paymaster not found");
      if (paymasterId !== sibling.paymasterId) {
        await refused(sibling, { body: { ...body, paymasterId } }, 404, "Paymaster not found");
      }
    }
    // The sibling's apiKey with this dApp's paymasterId: the apiKey decides which paymaster is meant.
    await refused(dapp, { apiKey: sibling.apiKey, body }, 404, "Paymaster not found");
    assert.equal(await fundingWalletOf(sibling), null);
    assert.equal(await fundingWalletOf(foreign), null);
    await linked(dapp, body);
  });

  test("a wrong or unknown authToken or apiKey is 404 `User not found`", async () => {
    const dapp = await t.dapp();
    const foreign = await t.dapp();
    const signer = wallet();
    const message = await fundingMessage(dapp);
    const body = await fundingBody(dapp, signer, message);
    for (const path of PATHS) {
      for (const headers of [
        { token: "pm_unknown", apiKey: dapp.apiKey },
        { token: dapp.token, apiKey: "unknown-api-key" },
        { token: foreign.token, apiKey: dapp.apiKey },
        { token: dapp.token, apiKey: foreign.apiKey },
        { token: dapp.apiKey, apiKey: dapp.token },
      ]) {
        await refused(dapp, { ...headers, body, path }, 404, "User not found");
        await refused(foreign, { ...headers, body, path }, 404, "User not found");
      }
    }
    await linked(dapp, body);
  });

  test("missing headers get 401, before the body is looked at", async () => {
    const dapp = await t.dapp();
    const signer = wallet();
    const body = await fundingBody(dapp, signer, await fundingMessage(dapp));
    for (const path of PATHS) {
      for (const headers of missingCredentials(dapp)) {
        await refused(dapp, { ...headers, body, path }, 401, MISSING);
        await refused(dapp, { ...headers, body: "not an object", path }, 401, MISSING);
      }
    }
    await linked(dapp, body);
  });
});
