// The OpenRPC document: valid against the OpenRPC meta-schema (checked by the OpenRPC project's own validator and by
// ajv, not by the code that wrote it), naming exactly the methods the endpoint dispatches, served without credentials
// with the absolute server URL its client used, and whose param schemas, read by another validator, accept and refuse
// what the methods' own compiled checks do.
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { after, before, describe, test } from "node:test";
import jsonSchemaMetaSchema from "@json-schema-tools/meta-schema";
import { validateOpenRPCDocument } from "@open-rpc/schema-utils-js";
import { Ajv } from "ajv";
import { RpcError } from "../../src/errors";
import { OPENRPC_PATH } from "../../src/rpc/docsRoute";
import { parseContextMode, parseMode, parseSponsoredContext } from "../../src/rpc/mode";
import { openRpcDocument } from "../../src/rpc/openrpc";
import { RPC_METHOD_NAMES } from "../../src/rpc/server";
import { parseUserOperation } from "../../src/rpc/userOperationInput";
import { readUserOperationV07 } from "../../src/rpc/userOperationV07Input";
import { startTestApp, type TestApp } from "../helpers/app";

interface Method {
  name: string;
  params: { name: string; required: boolean; schema: object }[];
  errors: { code: number; message: string }[];
}
interface Server {
  url: string;
  variables: Record<string, { default: string }>;
}
/** What GET /openrpc.json answers to inject's requests, whose Host header is `localhost:80`. */
const document = openRpcDocument("http://localhost") as { servers: Server[]; methods: Method[] };
// The package's types leave its one value out.
const { openrpcDocument: openRpcMetaSchema } = createRequire(import.meta.url)("@open-rpc/meta-schema") as {
  openrpcDocument: object;
};
const ajv = new Ajv({
  strict: false,
  allErrors: true,
  // The formats the meta-schemas use: a pattern must be a regular expression JavaScript compiles, a URI absolute.
  formats: {
    regex: (text: string) => compiles(text),
    uri: (text: string) => URL.canParse(text),
    "uri-reference": true,
  },
});
function compiles(pattern: string): boolean {
  try {
    new RegExp(pattern, "u");
    return true;
  } catch {
    return false;
  }
}
/**
 * The meta-schemas name a `$schema` of their own that ajv does not know (their rules are draft-07's), and the OpenRPC
 * one refers to the JSON Schema one once without the trailing slash of its id.
 */
const asDraft07 = (schema: unknown) => {
  const { $schema: _, ...rules } = JSON.parse(
    JSON.stringify(schema).replaceAll('"https://meta.json-schema.tools"', '"https://meta.json-schema.tools/"'),
  );
  return rules;
};
ajv.addSchema(asDraft07(jsonSchemaMetaSchema));
const isOpenRpc = ajv.compile(asDraft07(openRpcMetaSchema));

test("the document is valid OpenRPC", () => {
  assert.ok(isOpenRpc(document), JSON.stringify(isOpenRpc.errors?.slice(0, 3)));
});

test("the OpenRPC project's validator finds the document valid", () => {
  assert.equal(validateOpenRPCDocument(document as never), true);
});

test("either check can fail: a server URL without scheme and host is refused", () => {
  const relative = structuredClone(document);
  (relative.servers[0] as Server).url = "/api/v1/{chainId}/{apiKey}";
  assert.notEqual(validateOpenRPCDocument(relative as never), true);
  assert.equal(isOpenRpc(relative), false);
});

test("the meta-schema check can fail: a method without a name, or a schema of the wrong type, is refused", () => {
  const noName = structuredClone(document) as unknown as { methods: Record<string, unknown>[] };
  delete noName.methods[0]?.name;
  assert.equal(isOpenRpc(noName), false);
  const badSchema = structuredClone(document) as unknown as { methods: { params: { schema: unknown }[] }[] };
  (badSchema.methods[0]?.params[0] as { schema: unknown }).schema = { type: 5 };
  assert.equal(isOpenRpc(badSchema), false);
});

test("the documented methods are exactly the ones the endpoint dispatches", () => {
  assert.deepEqual(document.methods.map((method) => method.name).sort(), [...RPC_METHOD_NAMES].sort());
});

test("the server is the RPC path at the given origin, with its two variables", () => {
  assert.deepEqual(
    document.servers.map((server) => server.url),
    ["http://localhost/api/v1/{chainId}/{apiKey}"],
  );
  assert.deepEqual(Object.keys(document.servers[0]?.variables ?? {}).sort(), ["apiKey", "chainId"]);
});

test("every method lists the envelope's and the path's error codes, each with a meaning", () => {
  for (const method of document.methods) {
    const codes = method.errors.map((error) => error.code);
    for (const code of [-32700, -32600, -32601, -32602, -32001, -32005, -32002])
      assert.ok(codes.includes(code), method.name);
    assert.equal(new Set(codes).size, codes.length, `${method.name} lists a code twice`);
    for (const error of method.errors) assert.ok(error.message.length > 10, `${method.name} ${error.code}`);
  }
  const refusals = (name: string) => document.methods.find((method) => method.name === name)?.errors.map((e) => e.code);
  assert.ok(refusals("pm_getPaymasterData")?.includes(-32003));
  assert.ok(refusals("pm_sponsorUserOperation")?.includes(-32002));
});

test("the contexts that take `token` list `permit` beside it, with its value, deadline and signature, each described", () => {
  interface Described {
    description?: string;
    required?: string[];
    properties?: Record<string, Described>;
    anyOf?: Described[];
  }
  const contexts = [
    ["pm_getPaymasterStubData", 3],
    ["pm_getPaymasterData", 3],
    ["pm_sponsorUserOperation", 2],
  ] as const;
  for (const [name, position] of contexts) {
    const param = document.methods.find((method) => method.name === name)?.params[position];
    assert.ok(param?.name === "context", `${name}: params[${position}] is the context`);
    const members = (param.schema as Described).properties ?? {};
    assert.ok(members.token, `${name}: the context describes token`);
    // Null counts as absent, as for the other members; the object is the other branch.
    const permit = members.permit?.anyOf?.find((branch) => branch.properties !== undefined);
    assert.ok(permit?.description, `${name}: permit is listed and described`);
    assert.deepEqual(permit.required, ["value", "deadline", "signature"], name);
    for (const field of ["value", "deadline", "signature"]) {
      assert.ok(permit.properties?.[field]?.description, `${name}: permit.${field} is described`);
    }
  }
});

describe("the published param schemas decide as the methods' checks do", () => {
  const params = (method: string) => document.methods.find((m) => m.name === method)?.params ?? [];
  const accepts = (read: () => unknown) => {
    try {
      read();
      return true;
    } catch (error) {
      if (error instanceof RpcError) return false;
      throw error;
    }
  };
  const OP = {
    sender: "0x5FF137D4b0FDCD49DcA30c7CF57E578a026d2789",
    nonce: "0x1",
    initCode: "0x",
    callData: "0xabcd",
    callGasLimit: 100_000,
    verificationGasLimit: "70000",
    preVerificationGas: "0x5208",
    maxFeePerGas: null,
    signature: "0x",
  };
  const operations: unknown[] = [
    OP,
    { sender: OP.sender, nonce: 0 },
    { ...OP, nonce: "-1" },
    { ...OP, nonce: 1.5 },
    { ...OP, sender: "0x1234" },
    { ...OP, callData: "0xabc" },
    { ...OP, callGasLimit: true },
    { ...OP, sender: undefined },
    { ...OP, factory: "not read by v0.6" },
    [OP],
    "0x",
    // v0.7/v0.8 shapes: either reader's acceptance is the union's.
    { sender: OP.sender, nonce: "0x0", factory: "0x7702", factoryData: "0x", callData: "0x" },
    { sender: OP.sender, nonce: "0x0", initCode: "0xabc", factory: OP.sender, paymasterVerificationGasLimit: "0x1" },
    { sender: OP.sender, nonce: "0x0", initCode: "0xabc", factory: "0x12" },
    { sender: OP.sender, nonce: "0x0", initCode: "0xabc", eip7702Auth: { chainId: 1 } },
    {
      sender: OP.sender,
      nonce: "0x0",
      initCode: "0xabc",
      eip7702Auth: { chainId: "0x1", address: OP.sender, nonce: 0, yParity: "0x1", r: "0x1", s: "0x2" },
    },
  ];
  /** The methods read params[0] with v0.6's reader, or v0.7's after a v0.7/v0.8 EntryPoint. */
  const eitherReader = (op: unknown) =>
    accepts(() => parseUserOperation(op)) || accepts(() => readUserOperationV07(op, "0.8"));
  for (const method of ["pm_sponsorUserOperation", "pm_getPaymasterStubData", "pm_getPaymasterData"]) {
    const userOpSchema = ajv.compile(params(method)[0]?.schema ?? {});
    operations.forEach((op, index) => {
      test(`${method}: user operation ${index}`, () => {
        assert.equal(userOpSchema(op), eitherReader(op), JSON.stringify(op));
      });
    });
  }

  const modes: unknown[] = [
    { mode: "SPONSORED" },
    { mode: "SPONSORSHIP", calculateGasLimits: null, expiryDuration: 86_400 },
    { mode: "ERC20", tokenInfo: { feeTokenAddress: OP.sender, tokenList: ["", null, OP.sender] } },
    { mode: "ERC20", tokenInfo: { tokenList: ["0x12"] } },
    { mode: "sponsored" },
    { mode: "SPONSORED", expiryDuration: 0 },
    { mode: "SPONSORED", sponsorshipInfo: { smartAccountInfo: { name: "BICONOMY" } } },
    { mode: "SPONSORED", sponsorshipInfo: { webhookData: [] } },
    {},
    null,
  ];
  const modeSchema = ajv.compile(params("pm_sponsorUserOperation")[1]?.schema ?? {});
  modes.forEach((mode, index) => {
    test(`mode object ${index}`, () => {
      // params[1] also takes an EntryPoint address; a mode object is never a string.
      assert.equal(
        modeSchema(mode),
        accepts(() => parseMode(mode)),
        JSON.stringify(mode),
      );
    });
  });

  const contexts: unknown[] = [{}, { mode: null, expiryDuration: 5 }, { mode: "FREE" }, { calculateGasLimits: "yes" }];
  const contextSchema = ajv.compile(params("pm_getPaymasterData")[3]?.schema ?? {});
  contexts.forEach((context, index) => {
    test(`context ${index}`, () => {
      assert.equal(
        contextSchema(context),
        accepts(() => parseSponsoredContext(context, "params[3]", "not here")),
      );
    });
  });

  // The permit's shape, as the context's own check reads it (its range and deadline are checked after, by the flow).
  const signature = `0x${"ab".repeat(65)}`;
  const permits: unknown[] = [
    null,
    { value: "0x1", deadline: "1", signature },
    { value: "1", deadline: `0x${"f".repeat(64)}`, signature, extra: true },
    "0x12",
    [],
    { value: "-1", deadline: "1", signature },
    { value: 1, deadline: "1", signature },
    { deadline: "1", signature },
    { value: "1", deadline: "0x", signature },
    { value: "1", deadline: "1", signature: "0xabc" },
    { value: "1", deadline: "1" },
  ];
  permits.forEach((permit, index) => {
    test(`context with permit ${index}`, () => {
      const context = { token: OP.sender, permit };
      assert.equal(
        contextSchema(context),
        accepts(() => parseContextMode(context, "params[3]")),
        JSON.stringify(permit),
      );
    });
  });
});

describe(`GET ${OPENRPC_PATH}`, () => {
  let t: TestApp;
  /** The same service behind a proxy at 127.0.0.1 (inject's peer address) that TRUST_PROXY believes. */
  let proxied: TestApp;
  before(async () => {
    t = await startTestApp();
    proxied = await startTestApp({ db: t.db, trustProxy: ["127.0.0.1"] });
  });
  after(async () => {
    await proxied.close();
    await t.close();
  });

  const get = (app: TestApp, headers: Record<string, string> = {}) =>
    app.app.inject({ method: "GET", url: OPENRPC_PATH, headers });
  const serverUrl = async (app: TestApp, headers: Record<string, string>) =>
    ((await get(app, headers)).json() as { servers: Server[] }).servers[0]?.url;

  test("is served without credentials, as JSON, the document itself, valid for the OpenRPC project's validator", async () => {
    const reply = await get(t);
    assert.equal(reply.statusCode, 200);
    assert.match(String(reply.headers["content-type"]), /^application\/json/);
    assert.deepEqual(reply.json(), document);
    assert.equal(validateOpenRPCDocument(reply.json()), true);
  });

  test("names the origin of the Host header", async () => {
    assert.equal(
      await serverUrl(t, { host: "paymaster.example:8443" }),
      "http://paymaster.example:8443/api/v1/{chainId}/{apiKey}",
    );
    assert.equal(await serverUrl(t, { host: "[::1]:3000" }), "http://[::1]:3000/api/v1/{chainId}/{apiKey}");
  });

  test("believes X-Forwarded-Proto and X-Forwarded-Host from a trusted proxy only", async () => {
    const forwarded = { host: "10.0.0.5:3000", "x-forwarded-proto": "https", "x-forwarded-host": "pm.example" };
    assert.equal(await serverUrl(proxied, forwarded), "https://pm.example/api/v1/{chainId}/{apiKey}");
    assert.equal(await serverUrl(t, forwarded), "http://10.0.0.5:3000/api/v1/{chainId}/{apiKey}");
  });

  test("refuses a host that is not an origin, naming the header, rather than publish it", async () => {
    const refusals = [
      [t, { host: "pm.example/evil" }],
      [t, { host: "user@pm.example" }],
      [t, { host: "pm.example:99999" }],
      [proxied, { "x-forwarded-proto": "javascript" }],
      [proxied, { "x-forwarded-host": "pm.example?x=1" }],
    ] as const;
    for (const [app, headers] of refusals) {
      const reply = await get(app, headers);
      assert.equal(reply.statusCode, 400, JSON.stringify(headers));
      assert.match(reply.json().message, /Host header/);
    }
  });
});
