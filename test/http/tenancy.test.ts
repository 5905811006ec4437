import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { type Dapp, type Reply, startTestApp, type TestApp } from "../helpers/app";

/**
 * Tenancy (docs/accounts.md, 'Tenancy'): an authToken sees only its own paymasters, and an apiKey of another account is
 * treated as not found, on every management endpoint. Two accounts, each with one fully set-up dApp, try every endpoint
 * on each other's data; afterwards both dApps must read exactly as before.
 */
let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

const BOTH_HEADERS = "Auth token and API key is required in the headers";
const TOKEN_HEADER = "Auth token is required in the headers";

const ABI = JSON.stringify([
  {
    type: "function",
    name: "approve",
    inputs: [
      { name: "spender", type: "address" },
      { name: "amount", type: "uint256" },
    ],
  },
  { type: "function", name: "transfer", inputs: [{ type: "address" }, { type: "uint256" }] },
]);

const limitPolicyData = {
  type: "PAYMASTER",
  cycleDuration: { value: 1, unit: "day" },
  threshold: 10,
  thresholdType: "COUNT",
};

interface FundingBody {
  paymasterId: string;
  type: string;
  signature: string;
  address: string;
}

/** One account's dApp with one of everything. `label` prefixes every name so that leaks are easy to spot. */
interface Side {
  label: string;
  dapp: Dapp;
  contractAddress: string;
  limitPolicyId: string;
  webhookPolicyId: string;
  /** Created, then paused: activating it is a visible change. */
  deploymentPolicyId: string;
  webhookId: string;
  /** A signature of the dApp's latest funding message, not sent yet. */
  fundingBody: FundingBody;
}

const as = (side: Side) => ({ token: side.dapp.token, apiKey: side.dapp.apiKey });

async function ok(method: string, path: string, options: Parameters<TestApp["call"]>[2]): Promise<Reply> {
  const reply = await t.call(method, path, options);
  assert.equal(reply.status, 200, `${method} ${path}: ${JSON.stringify(reply.body)}`);
  return reply;
}

async function signedFundingBody(dapp: Dapp): Promise<FundingBody> {
  const reply = await ok("GET", `funding-message/${dapp.paymasterId}`, { token: dapp.token, apiKey: dapp.apiKey });
  const { fundingMessage } = reply.body.data as { fundingMessage: string };
  const signer = privateKeyToAccount(generatePrivateKey());
  return {
    paymasterId: dapp.paymasterId,
    type: "paymasterFundingId",
    signature: await signer.signMessage({ message: fundingMessage }),
    address: signer.address,
  };
}

async function side(label: string, contractAddress: string): Promise<Side> {
  const dapp = await t.dapp({ name: `${label}-dapp` });
  const auth = { token: dapp.token, apiKey: dapp.apiKey };
  await ok("POST", "smart-contract", {
    ...auth,
    body: { name: `${label}-contract`, address: contractAddress, abi: ABI },
  });
  const policy = async (name: string, policyType: string, policyData: unknown) =>
    (
      (await ok("POST", "paymaster-policy", { ...auth, body: { name, policyType, policyData } })).body.data as {
        _id: string;
      }
    )._id;
  const limitPolicyId = await policy(`${label}-limit`, "PAYMASTER_SA_LIMIT", limitPolicyData);
  const webhookPolicyId = await policy(`${label}-webhook-rule`, "WEBHOOK", {
    url: `https://${label}.example.com/rule`,
  });
  const deploymentPolicyId = await policy(`${label}-deployment`, "WALLET_DEPLOYMENT", {});
  await ok("PATCH", `paymaster-policy/deactivate/${deploymentPolicyId}`, auth);
  const webhook = await ok("POST", "webhook", {
    ...auth,
    body: { webhookUrl: `https://${label}.example.com/hook`, requestType: "POST" },
  });
  const { webhookId } = webhook.body.data as { webhookId: string };
  return {
    label,
    dapp,
    contractAddress,
    limitPolicyId,
    webhookPolicyId,
    deploymentPolicyId,
    webhookId,
    fundingBody: await signedFundingBody(dapp),
  };
}

const sides = async () => ({
  a: await side("a", `0x${"a1".repeat(20)}`),
  b: await side("b", `0x${"b2".repeat(20)}`),
});

/** Everything the owner can read about its dApp, through the owner's own credentials. */
async function snapshot(s: Side) {
  const read = async (path: string) => (await ok("GET", path, as(s))).body.data;
  return {
    paymasters: (await ok("GET", "paymasterParameters", { token: s.dapp.token })).body.data,
    contracts: await read("smart-contract"),
    policies: await read("paymaster-policy"),
    webhooks: await read("webhook"),
  };
}

/** The funding message fetched at set-up is still the latest and unused: its signature is still accepted. */
async function fundingMessageIntact(s: Side): Promise<void> {
  const reply = await t.call("PATCH", "paymasterParameters", { ...as(s), body: s.fundingBody });
  assert.deepEqual(
    [reply.status, reply.body.message],
    [200, "Paymaster updated successfully"],
    `${s.label}'s funding message was replaced or used: ${JSON.stringify(reply.body)}`,
  );
}

interface Failure {
  status: number;
  message: string;
}

interface Endpoint {
  label: string;
  method: string;
  path: (s: Side) => string;
  body?: (s: Side) => unknown;
  query?: (s: Side) => Record<string, string>;
  /** The 401 text when a header is missing. */
  missing: string;
  /** What a token and an apiKey of two different accounts get. */
  cross: Failure;
  /** What the dApp's own credentials get with the other dApp's ids (for endpoints that name a record). */
  foreignIds?: Failure;
  /** Endpoints 1 and 2: the token alone is enough. */
  apiKeyNotRequired?: boolean;
  /** Whether the endpoint's success changes what `snapshot` reads. */
  writes: boolean;
  /** The owner's own successful request, when the request under test cannot simply be repeated with its credentials. */
  control?: (s: Side) => Promise<Reply>;
}

const unauthorized = (message: string): Failure => ({ status: 401, message });
let counter = 0;
const fresh = (prefix: string) => `${prefix}-${++counter}`;

const dappEndpoints: Endpoint[] = [
  {
    label: "3 POST smart-contract",
    method: "POST",
    path: () => "smart-contract",
    body: () => ({ name: fresh("contract"), address: `0x${"c3".repeat(20)}`, abi: ABI }),
    missing: BOTH_HEADERS,
    cross: unauthorized(BOTH_HEADERS),
    writes: true,
  },
  {
    label: "4 GET smart-contract",
    method: "GET",
    path: () => "smart-contract",
    missing: BOTH_HEADERS,
    cross: unauthorized(BOTH_HEADERS),
    writes: false,
  },
  {
    label: "5 PATCH smart-contract",
    method: "PATCH",
    path: () => "smart-contract",
    body: (s) => ({ address: s.contractAddress, whitelistedMethods: ["approve"] }),
    missing: BOTH_HEADERS,
    cross: { status: 400, message: "Smart contract not found" },
    foreignIds: { status: 400, message: "Smart contract not found" },
    writes: true,
  },
  {
    label: "7 DELETE smart-contract",
    method: "DELETE",
    path: () => "smart-contract",
    body: (s) => ({ address: s.contractAddress }),
    missing: BOTH_HEADERS,
    cross: { status: 400, message: "Smart contract not found" },
    foreignIds: { status: 400, message: "Smart contract not found" },
    writes: true,
  },
  {
    label: "GET funding-message/{paymasterId}",
    method: "GET",
    path: (s) => `funding-message/${s.dapp.paymasterId}`,
    missing: BOTH_HEADERS,
    cross: unauthorized(BOTH_HEADERS),
    foreignIds: { status: 404, message: "Paymaster not found" },
    writes: false,
  },
  {
    label: "GET funding-balance/{paymasterId}",
    method: "GET",
    path: (s) => `funding-balance/${s.dapp.paymasterId}`,
    missing: BOTH_HEADERS,
    cross: unauthorized(BOTH_HEADERS),
    foreignIds: { status: 404, message: "Paymaster not found" },
    writes: false,
  },
  ...(["paymasterParameters", "paymaster"] as const).map(
    (path): Endpoint => ({
      label: `PATCH ${path} (funding wallet)`,
      method: "PATCH",
      path: () => path,
      body: (s) => s.fundingBody,
      missing: BOTH_HEADERS,
      cross: { status: 404, message: "User not found" },
      foreignIds: { status: 404, message: "Paymaster not found" },
      writes: true,
      // The set-up signature is used up by the intactness check: sign a new message.
      control: async (s) => t.call("PATCH", path, { ...as(s), body: await signedFundingBody(s.dapp) }),
    }),
  ),
  ...(
    [
      ["8", "PAYMASTER_SA_LIMIT", limitPolicyData],
      ["9", "WEBHOOK", { url: "https://example.com/new-rule" }],
      ["10", "WALLET_DEPLOYMENT", {}],
    ] as const
  ).map(
    ([number, policyType, policyData]): Endpoint => ({
      label: `${number} POST paymaster-policy ${policyType}`,
      method: "POST",
      path: () => "paymaster-policy",
      body: () => ({ name: fresh("policy"), policyType, policyData }),
      missing: BOTH_HEADERS,
      cross: unauthorized(BOTH_HEADERS),
      writes: true,
    }),
  ),
  {
    label: "11 GET paymaster-policy",
    method: "GET",
    path: () => "paymaster-policy",
    missing: BOTH_HEADERS,
    cross: unauthorized(BOTH_HEADERS),
    writes: false,
  },
  {
    label: "12 PATCH paymaster-policy/limit/{policyId}",
    method: "PATCH",
    path: (s) => `paymaster-policy/limit/${s.limitPolicyId}`,
    body: () => ({ threshold: 99, name: fresh("renamed") }),
    missing: BOTH_HEADERS,
    cross: unauthorized(BOTH_HEADERS),
    foreignIds: { status: 404, message: "Policy not found" },
    writes: true,
  },
  {
    label: "13 PATCH paymaster-policy/deactivate/{policyId}",
    method: "PATCH",
    path: (s) => `paymaster-policy/deactivate/${s.webhookPolicyId}`,
    missing: BOTH_HEADERS,
    cross: unauthorized(BOTH_HEADERS),
    foreignIds: { status: 404, message: "Policy not found" },
    writes: true,
  },
  {
    label: "14 PATCH paymaster-policy/activate/{policyId}",
    method: "PATCH",
    path: (s) => `paymaster-policy/activate/${s.deploymentPolicyId}`,
    missing: BOTH_HEADERS,
    cross: unauthorized(BOTH_HEADERS),
    foreignIds: { status: 404, message: "Policy not found" },
    writes: true,
  },
  {
    label: "15 POST webhook",
    method: "POST",
    path: () => "webhook",
    body: () => ({ webhookUrl: `https://example.com/${fresh("hook")}`, requestType: "GET" }),
    missing: BOTH_HEADERS,
    cross: unauthorized(BOTH_HEADERS),
    writes: true,
  },
  {
    label: "16 GET webhook (all)",
    method: "GET",
    path: () => "webhook",
    missing: TOKEN_HEADER,
    cross: unauthorized(TOKEN_HEADER),
    writes: false,
  },
  {
    label: "16 GET webhook?webhookId",
    method: "GET",
    path: () => "webhook",
    query: (s) => ({ webhookId: s.webhookId }),
    missing: TOKEN_HEADER,
    cross: unauthorized(TOKEN_HEADER),
    foreignIds: { status: 404, message: "Webhook not found" },
    writes: false,
  },
  {
    label: "17 PATCH webhook",
    method: "PATCH",
    path: () => "webhook",
    body: (s) => ({ webhookId: s.webhookId, active: false }),
    missing: BOTH_HEADERS,
    cross: unauthorized(BOTH_HEADERS),
    foreignIds: { status: 404, message: "Webhook not found" },
    writes: true,
  },
  {
    label: "18 DELETE webhook",
    method: "DELETE",
    path: () => "webhook",
    body: (s) => ({ webhookId: s.webhookId }),
    missing: BOTH_HEADERS,
    cross: unauthorized(BOTH_HEADERS),
    foreignIds: { status: 404, message: "Webhook not found" },
    writes: true,
  },
];

/** The endpoint's request naming `target`'s records, sent with the given headers. */
const send = (endpoint: Endpoint, target: Side, headers: { token?: string; apiKey?: string }) =>
  t.call(endpoint.method, endpoint.path(target), {
    ...headers,
    body: endpoint.body?.(target),
    query: endpoint.query?.(target),
  });

const expectFailure = (reply: Reply, failure: Failure, what: string) =>
  assert.deepEqual(
    [reply.status, reply.body],
    [failure.status, { statusCode: failure.status, message: failure.message }],
    what,
  );

describe("another account's dApp is out of reach on every endpoint", () => {
  for (const endpoint of dappEndpoints) {
    test(endpoint.label, async () => {
      const { a, b } = await sides();
      const initial = { a: await snapshot(a), b: await snapshot(b) };

      for (const [owner, other] of [
        [a, b],
        [b, a],
      ] as const) {
        for (const target of [owner, other]) {
          // The other account's token with this dApp's apiKey, whichever dApp's records are named.
          const reply = await send(endpoint, target, { token: other.dapp.token, apiKey: owner.dapp.apiKey });
          expectFailure(
            reply,
            endpoint.cross,
            `${other.label}'s token, ${owner.label}'s apiKey, ${target.label}'s ids`,
          );
        }
        if (endpoint.foreignIds) {
          // The other dApp's own credentials, naming this dApp's records.
          const reply = await send(endpoint, owner, as(other));
          expectFailure(reply, endpoint.foreignIds, `${other.label}'s credentials with ${owner.label}'s ids`);
        }
      }

      assert.deepEqual(await snapshot(a), initial.a, "a's data is unchanged");
      assert.deepEqual(await snapshot(b), initial.b, "b's data is unchanged");
      await fundingMessageIntact(a);
      await fundingMessageIntact(b);

      // The same request with the owner's own credentials succeeds: the refusals above were about tenancy only.
      const funded = { a: await snapshot(a), b: await snapshot(b) };
      const control = endpoint.control ? await endpoint.control(a) : await send(endpoint, a, as(a));
      assert.equal(control.status, 200, `a's own request: ${JSON.stringify(control.body)}`);
      if (endpoint.writes) assert.notDeepEqual(await snapshot(a), funded.a, "a's own request changed a's data");
      else assert.deepEqual(await snapshot(a), funded.a);
      assert.deepEqual(await snapshot(b), funded.b, "a's own request left b alone");
    });
  }
});

describe("endpoints 1 and 2 (token only) act on the token's own account whatever apiKey is sent", () => {
  for (const path of ["paymasterParameters", "paymaster"]) {
    test(`GET ${path}: lists only the token's own paymasters`, async () => {
      const { a, b } = await sides();
      for (const [owner, other] of [
        [a, b],
        [b, a],
      ] as const) {
        const own = await ok("GET", path, { token: owner.dapp.token });
        const withOtherKey = await ok("GET", path, { token: owner.dapp.token, apiKey: other.dapp.apiKey });
        assert.deepEqual(withOtherKey.body, own.body);
        const data = own.body.data as { apiKey: string; paymasterId: string }[];
        assert.deepEqual(
          data.map((p) => [p.apiKey, p.paymasterId]),
          [[owner.dapp.apiKey, owner.dapp.paymasterId]],
        );
      }
    });

    test(`POST ${path}: creates in the token's account, never in the apiKey's`, async () => {
      const { a, b } = await sides();
      const initialA = await snapshot(a);
      const reply = await ok("POST", path, {
        token: b.dapp.token,
        apiKey: a.dapp.apiKey,
        body: { name: "b-second", type: "HYBRID", chainId: 31337, version: "1.0.0" },
      });
      const created = reply.body.data as { apiKey: string; paymasterId: string };
      assert.deepEqual(await snapshot(a), initialA);
      const bPaymasters = (await snapshot(b)).paymasters as { paymasterId: string }[];
      assert.deepEqual(
        bPaymasters.map((p) => p.paymasterId),
        [b.dapp.paymasterId, created.paymasterId],
      );
      // The new paymaster is b's: b's token with its apiKey works, a's token with it does not.
      await ok("GET", "smart-contract", { token: b.dapp.token, apiKey: created.apiKey });
      const foreign = await t.call("GET", "smart-contract", { token: a.dapp.token, apiKey: created.apiKey });
      expectFailure(foreign, unauthorized(BOTH_HEADERS), "a's token with b's new apiKey");
    });
  }
});

describe("lists show nothing of another account", () => {
  test("b's reads contain none of a's ids, names, addresses or keys", async () => {
    const { a, b } = await sides();
    const secretsOfA = [
      a.dapp.apiKey,
      a.dapp.paymasterId,
      a.dapp.accountId,
      a.contractAddress,
      a.limitPolicyId,
      a.webhookPolicyId,
      a.deploymentPolicyId,
      a.webhookId,
      "a-dapp",
      "a-contract",
      "a-limit",
      "a-webhook-rule",
      "a-deployment",
      "a.example.com",
    ];
    const bView = JSON.stringify({
      ...(await snapshot(b)),
      webhook: (await ok("GET", "webhook", { ...as(b), query: { webhookId: b.webhookId } })).body,
    });
    for (const secret of secretsOfA) assert.ok(!bView.includes(secret), `b sees ${secret}`);
    // And the check can fail: a's own view holds them.
    const aView = JSON.stringify(await snapshot(a));
    for (const secret of secretsOfA) {
      assert.ok(aView.includes(secret), `a sees ${secret}`);
    }
  });
});

describe("missing headers", () => {
  let a: Side;
  let b: Side;
  let initial: { a: unknown; b: unknown };
  before(async () => {
    ({ a, b } = await sides());
    initial = { a: await snapshot(a), b: await snapshot(b) };
  });

  const accountEndpoints: Endpoint[] = ["paymasterParameters", "paymaster"].flatMap((path) => [
    {
      label: `1 GET ${path}`,
      method: "GET",
      path: () => path,
      missing: TOKEN_HEADER,
      cross: unauthorized(TOKEN_HEADER),
      apiKeyNotRequired: true,
      writes: false,
    },
    {
      label: `2 POST ${path}`,
      method: "POST",
      path: () => path,
      body: () => ({ name: fresh("created"), type: "HYBRID", chainId: 31337, version: "1.0.0" }),
      missing: TOKEN_HEADER,
      cross: unauthorized(TOKEN_HEADER),
      apiKeyNotRequired: true,
      writes: true,
    },
  ]);

  for (const endpoint of [...accountEndpoints, ...dappEndpoints]) {
    test(`${endpoint.label}: 401 "${endpoint.missing}"`, async () => {
      const headerSets: { token?: string; apiKey?: string }[] = [
        {},
        { apiKey: a.dapp.apiKey },
        { token: "", apiKey: a.dapp.apiKey },
        ...(endpoint.apiKeyNotRequired ? [] : [{ token: a.dapp.token }, { token: a.dapp.token, apiKey: "" }]),
      ];
      for (const headers of headerSets) {
        const reply = await send(endpoint, a, headers);
        expectFailure(reply, unauthorized(endpoint.missing), JSON.stringify(headers));
      }
      assert.deepEqual({ a: await snapshot(a), b: await snapshot(b) }, initial);
    });
  }

  test("the set-up funding messages survived every refused request", async () => {
    await fundingMessageIntact(a);
    await fundingMessageIntact(b);
  });
});
