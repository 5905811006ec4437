import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { encodeFunctionData, type Hex, parseAbi, recoverMessageAddress, size } from "viem";
import {
  decodeVerifyingPaymasterAndData,
  getVerifyingPaymasterHash,
} from "../../src/bindings/paymasters/paymasterAndData";
import { LOCAL_VERIFYING_PAYMASTER_ADDRESS } from "../../src/devChain/deployments";
import { NO_POLICIES_REASON } from "../../src/sponsorship/rules/fundingAndRules";
import { listSponsorships } from "../../src/storage/sponsorships";
import { type Dapp, startTestApp, type TestApp } from "../helpers/app";
import { addPolicy, fundedDapp, linkFundingWallet, rpc, whitelist } from "../helpers/dappSetup";
import { MIXED_FORM_GAS, userOpV06 } from "../helpers/userOps";

const TARGET = "0x1111111111111111111111111111111111111111";
const OTHER = "0x2222222222222222222222222222222222222222";
const targetAbi = parseAbi(["function mint(uint256 amount)", "function burn(uint256 amount)"]);
const accounts = parseAbi([
  "function execute_ncC(address dest, uint256 value, bytes func)",
  "function execute(address dest, uint256 value, bytes func)",
  "function executeBatch_y6U(address[] dest, uint256[] value, bytes[] func)",
  "function executeBatch(address[] dest, bytes[] func)",
  "function executeUserOp(address to, uint256 value, bytes data, uint8 operation)",
]);
const mint = encodeFunctionData({ abi: targetAbi, functionName: "mint", args: [5n] });
const burn = encodeFunctionData({ abi: targetAbi, functionName: "burn", args: [5n] });
const biconomyCall = (to: string, data: Hex, value = 0n) =>
  encodeFunctionData({ abi: accounts, functionName: "execute_ncC", args: [to as Hex, value, data] });

let t: TestApp;
let dapp: Dapp;
let fundingAddress: Hex;

before(async () => {
  t = await startTestApp();
  ({ fundingAddress, ...dapp } = await fundedDapp(t, {
    walletDeployment: true,
    contract: { address: TARGET, abi: targetAbi, methods: ["mint"] },
  }));
});
after(() => t.close());

const userOp = (overrides: Record<string, unknown> = {}) =>
  userOpV06("0x4dF23B78543F5c2F9CBCDF09956288B3e97bb9a4", 8, {
    callData: biconomyCall(TARGET, mint),
    ...MIXED_FORM_GAS,
    signature: "0x",
    ...overrides,
  });
const sponsoredMode = (extra: Record<string, unknown> = {}) => ({
  mode: "SPONSORED",
  calculateGasLimits: false,
  ...extra,
});
const sponsorWith = (op: unknown, mode: unknown = sponsoredMode(), target: Pick<Dapp, "apiKey" | "chainId"> = dapp) =>
  rpc(t, target, "pm_sponsorUserOperation", [op, mode]);

describe("sponsored", () => {
  test("answers a signed 276-byte paymasterAndData over exactly the returned gas values", async () => {
    const before = Math.floor(Date.now() / 1000);
    const reply = await sponsorWith(userOp());
    assert.equal(reply.status, 200);
    assert.equal(reply.body.jsonrpc, "2.0");
    assert.equal(reply.body.id, 1);
    const result = reply.body.result;
    assert.equal(result.mode, "SPONSORED");
    assert.equal(result.MODE, "SPONSORED");
    assert.equal(result.preVerificationGas, "75388");
    assert.equal(result.verificationGasLimit, 57121);
    assert.equal(result.callGasLimit, 108848);
    assert.equal(result.reason, undefined);
    assert.equal(size(result.paymasterAndData), 276);

    const data = decodeVerifyingPaymasterAndData(result.paymasterAndData);
    assert.equal(data.paymaster, LOCAL_VERIFYING_PAYMASTER_ADDRESS);
    assert.equal(data.paymasterId.toLowerCase(), fundingAddress);
    assert.ok(data.validUntil >= before + 300 && data.validUntil <= before + 302, "default expiry is 300 s");
    assert.equal(data.validUntil - data.validAfter, 360, "validAfter allows 60 s of clock skew");

    const hash = getVerifyingPaymasterHash(
      {
        sender: "0x4dF23B78543F5c2F9CBCDF09956288B3e97bb9a4",
        nonce: 8n,
        initCode: "0x",
        callData: biconomyCall(TARGET, mint),
        callGasLimit: 108848n,
        verificationGasLimit: 57121n,
        preVerificationGas: 75388n,
        maxFeePerGas: 0xc02244n,
        maxPriorityFeePerGas: 0xf4240n,
      },
      {
        chainId: 31337,
        paymaster: data.paymaster,
        paymasterId: data.paymasterId,
        validUntil: data.validUntil,
        validAfter: data.validAfter,
      },
    );
    const signer = await recoverMessageAddress({ message: { raw: hash }, signature: data.signature });
    assert.equal(signer, t.ctx.signer.address);
  });

  test("every uint form (hex, decimal string, number) signs the same values; nonces may use 256 bits", async () => {
    const bigNonce = (1n << 255n) + 7n;
    const forms = [
      { nonce: `0x${bigNonce.toString(16)}`, callGasLimit: "0x1a930" },
      { nonce: bigNonce.toString(), callGasLimit: "108848" },
      { nonce: bigNonce.toString(), callGasLimit: 108848 },
    ];
    const results = [];
    for (const form of forms) {
      const reply = await sponsorWith(userOp(form), sponsoredMode({ expiryDuration: 600 }));
      assert.equal(reply.status, 200, JSON.stringify(reply.body));
      results.push(reply.body.result);
    }
    assert.deepEqual(
      results.map((r) => [r.callGasLimit, size(r.paymasterAndData)]),
      forms.map(() => [108848, 276]),
    );
    const records = await listSponsorships(t.db, dapp.paymasterId);
    assert.ok(records.some((r) => r.nonce === bigNonce.toString() && r.sponsored));
  });

  test("each answer is recorded before it is sent: sender, nonce, userOpHash, window and rule outcomes", async () => {
    const reply = await sponsorWith(userOp({ nonce: "0x77" }));
    const data = decodeVerifyingPaymasterAndData(reply.body.result.paymasterAndData);
    const record = (await listSponsorships(t.db, dapp.paymasterId)).find((r) => r.nonce === "119");
    assert.ok(record);
    assert.equal(record.sponsored, true);
    assert.equal(record.sender, "0x4df23b78543f5c2f9cbcdf09956288b3e97bb9a4");
    assert.match(record.user_op_hash ?? "", /^0x[0-9a-f]{64}$/);
    assert.equal(Number(record.valid_until), data.validUntil);
    assert.equal(record.call_gas_limit, "108848");
    assert.deepEqual(
      record.rule_outcomes.map((o) => [o.rule, o.passed]),
      [
        ["fundingAndRules", true],
        ["walletDeployment", true],
        ["contractWhitelist", true],
        ["maxCostPerOp", true],
        ["maxGasPrice", true],
        ["timeWindow", true],
        ["senderLists", true],
        ["spendingLimits", true],
        ["deposit", true],
        ["webhooks", true],
      ],
    );
  });

  test("SPONSORSHIP, pm_getFeeQuoteOrData, its misspelling and the permissionless form answer alike", async () => {
    for (const [method, mode] of [
      ["pm_sponsorUserOperation", { mode: "SPONSORSHIP" }],
      ["pm_getFeeQuoteOrData", sponsoredMode()],
      ["pm_getFeeQuotesOrData", sponsoredMode()],
      ["pm_sponsorUserOperation", "0x5FF137D4b0FDCD49DcA30c7CF57E578a026d2789"],
    ] as const) {
      const reply = await rpc(t, dapp, method, [userOp(), mode]);
      assert.equal(reply.status, 200, `${method} ${JSON.stringify(reply.body)}`);
      assert.equal(size(reply.body.result.paymasterAndData), 276);
    }
  });

  test("ids are echoed with their JSON type", async () => {
    assert.equal(
      (await rpc(t, dapp, "pm_sponsorUserOperation", [userOp(), sponsoredMode()], { id: "abc" })).body.id,
      "abc",
    );
    assert.equal((await rpc(t, dapp, "pm_sponsorUserOperation", [userOp(), sponsoredMode()], { id: 0 })).body.id, 0);
  });

  test("a batch whose every call is whitelisted, and a plain transfer to a whitelisted contract, are sponsored", async () => {
    const batch = encodeFunctionData({
      abi: accounts,
      functionName: "executeBatch_y6U",
      args: [[TARGET, TARGET], [], [mint, "0x"]],
    });
    assert.equal(size((await sponsorWith(userOp({ callData: batch }))).body.result.paymasterAndData), 276);
    const transfer = biconomyCall(TARGET, "0x", 10n ** 16n);
    assert.equal(size((await sponsorWith(userOp({ callData: transfer }))).body.result.paymasterAndData), 276);
  });

  test("SimpleAccount (INFINITISM 1.0.0) and Safe layouts are decoded", async () => {
    const info = (name: string, version: string) =>
      sponsoredMode({ sponsorshipInfo: { smartAccountInfo: { name, version } } });
    const simple = encodeFunctionData({ abi: accounts, functionName: "execute", args: [TARGET, 0n, mint] });
    assert.equal(
      size((await sponsorWith(userOp({ callData: simple }), info("INFINITISM", "1.0.0"))).body.result.paymasterAndData),
      276,
    );
    const simpleBatch = encodeFunctionData({ abi: accounts, functionName: "executeBatch", args: [[TARGET], [mint]] });
    assert.equal(
      size(
        (await sponsorWith(userOp({ callData: simpleBatch }), info("INFINITISM", "1.0.0"))).body.result
          .paymasterAndData,
      ),
      276,
    );
    const safe = encodeFunctionData({ abi: accounts, functionName: "executeUserOp", args: [TARGET, 0n, mint, 0] });
    assert.equal(
      size((await sponsorWith(userOp({ callData: safe }), info("SAFE", "1.4.1"))).body.result.paymasterAndData),
      276,
    );
  });
});

describe("refused: paymasterAndData 0x with the reason, recorded too", () => {
  const refusedWith = async (reply: Awaited<ReturnType<typeof sponsorWith>>, reason: RegExp | string) => {
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    assert.equal(reply.body.result.paymasterAndData, "0x");
    assert.equal(reply.body.result.mode, "SPONSORED");
    assert.equal(reply.body.result.callGasLimit, 108848, "the gas values come back as sent");
    if (typeof reason === "string") assert.equal(reply.body.result.reason, reason);
    else assert.match(reply.body.result.reason, reason);
  };

  test("rule 1: no funding wallet, then no rule at all (the SDK's text)", async () => {
    const bare = await t.dapp();
    await refusedWith(await sponsorWith(userOp(), sponsoredMode(), bare), /No funding wallet is linked/);
    await linkFundingWallet(t, bare);
    await refusedWith(await sponsorWith(userOp(), sponsoredMode(), bare), NO_POLICIES_REASON);
    const records = await listSponsorships(t.db, bare.paymasterId);
    assert.deepEqual(
      records.map((r) => [r.sponsored, r.rule_outcomes[0]?.rule]),
      [
        [false, "fundingAndRules"],
        [false, "fundingAndRules"],
      ],
    );
  });

  test("rule 2: initCode needs an active WALLET_DEPLOYMENT rule; deployment alone is then sponsored", async () => {
    const other = await t.dapp();
    await linkFundingWallet(t, other);
    await whitelist(t, other, TARGET, targetAbi, ["mint"]);
    const deploying = userOp({ initCode: "0x9406cc6185a346906296840746125a0e449764545fbfb9cf0000", callData: "0x" });
    await refusedWith(await sponsorWith(deploying, sponsoredMode(), other), /Wallet deployment is not sponsored/);
    const policyId = await addPolicy(t, other, "WALLET_DEPLOYMENT", {});
    assert.equal(size((await sponsorWith(deploying, sponsoredMode(), other)).body.result.paymasterAndData), 276);
    // Paused rules are not evaluated, and the pause applies to the very next request.
    await t.call("PATCH", `paymaster-policy/deactivate/${policyId}`, { token: other.token, apiKey: other.apiKey });
    await refusedWith(await sponsorWith(deploying, sponsoredMode(), other), /Wallet deployment is not sponsored/);
  });

  test("rule 3: a method, a target or a layout outside the whitelist", async () => {
    await refusedWith(
      await sponsorWith(userOp({ callData: biconomyCall(TARGET, burn) })),
      /^Smart contract data not found: selector 0x42966c68/,
    );
    await refusedWith(
      await sponsorWith(userOp({ callData: biconomyCall(OTHER, mint) })),
      /^Smart contract data not found: 0x2222/,
    );
    await refusedWith(
      await sponsorWith(userOp({ callData: biconomyCall(OTHER, "0x", 1n) })),
      /is not a whitelisted contract/,
    );
    await refusedWith(
      await sponsorWith(userOp({ callData: "0xdeadbeef00" })),
      /unknown callData layout: selector 0xdeadbeef/,
    );
    await refusedWith(await sponsorWith(userOp({ callData: "0x0000189a1234" })), /does not decode/);
    const batch = encodeFunctionData({
      abi: accounts,
      functionName: "executeBatch_y6U",
      args: [[TARGET, TARGET], [], [mint, burn]],
    });
    await refusedWith(await sponsorWith(userOp({ callData: batch })), /selector 0x42966c68/);
    const delegate = encodeFunctionData({ abi: accounts, functionName: "executeUserOp", args: [TARGET, 0n, mint, 1] });
    await refusedWith(
      await sponsorWith(
        userOp({ callData: delegate }),
        sponsoredMode({ sponsorshipInfo: { smartAccountInfo: { name: "SAFE", version: "1.4.1" } } }),
      ),
      /delegatecall/,
    );
    await refusedWith(
      await sponsorWith(
        userOp(),
        sponsoredMode({ sponsorshipInfo: { smartAccountInfo: { name: "KERNEL", version: "3.0.0" } } }),
      ),
      /unknown smart account KERNEL 3.0.0/,
    );
    await refusedWith(await sponsorWith(userOp({ callData: "0x" })), /callData is empty/);
  });

  test("rule 3 follows whitelist updates at once", async () => {
    const auth = { token: dapp.token, apiKey: dapp.apiKey };
    const patch = (methods: string[]) =>
      t.call("PATCH", "smart-contract", { ...auth, body: { address: TARGET, whitelistedMethods: methods } });
    assert.equal((await patch(["mint", "burn"])).status, 200);
    assert.equal(
      size((await sponsorWith(userOp({ callData: biconomyCall(TARGET, burn) }))).body.result.paymasterAndData),
      276,
    );
    assert.equal((await patch(["mint"])).status, 200);
    await refusedWith(await sponsorWith(userOp({ callData: biconomyCall(TARGET, burn) })), /selector 0x42966c68/);
  });

  test("with no whitelisted contract any call passes rule 3", async () => {
    const open = await t.dapp();
    await linkFundingWallet(t, open);
    await addPolicy(t, open, "WALLET_DEPLOYMENT", {});
    assert.equal(
      size(
        (await sponsorWith(userOp({ callData: biconomyCall(OTHER, burn) }), sponsoredMode(), open)).body.result
          .paymasterAndData,
      ),
      276,
    );
  });

  test("a chain without a verifying paymaster refuses with a reason", async () => {
    const amoy = await t.dapp({ chainId: 80002 });
    await linkFundingWallet(t, amoy);
    await addPolicy(t, amoy, "WALLET_DEPLOYMENT", {});
    await refusedWith(
      await sponsorWith(userOp(), sponsoredMode(), amoy),
      /No verifying paymaster is configured for chain 80002/,
    );
  });
});

describe("errors: JSON-RPC error, HTTP 4xx, message naming the problem", () => {
  const failsWith = (
    reply: { status: number; body: { error?: { code: number; message: string } } },
    status: number,
    code: number,
    message: RegExp,
  ) => {
    assert.equal(reply.status, status, JSON.stringify(reply.body));
    assert.equal(reply.body.error?.code, code);
    assert.match(reply.body.error?.message ?? "", message);
  };

  test("framing", async () => {
    const bad = await rpc(t, dapp, "", [], { raw: "{not json" });
    failsWith(bad, 400, -32700, /Parse error/);
    assert.equal((bad.body as { id: unknown }).id, null);
    failsWith(await rpc(t, dapp, "", [], { raw: "[]" }), 400, -32600, /batch/);
    failsWith(
      await rpc(t, dapp, "", [], { raw: '{"jsonrpc":"1.0","id":1,"method":"pm_sponsorUserOperation","params":[]}' }),
      400,
      -32600,
      /jsonrpc must be "2.0"/,
    );
    failsWith(await rpc(t, dapp, "", [], { raw: '{"jsonrpc":"2.0","id":1,"params":[]}' }), 400, -32600, /method/);
    failsWith(
      await rpc(t, dapp, "", [], { raw: '{"jsonrpc":"2.0","id":1,"method":"pm_sponsorUserOperation","params":{}}' }),
      400,
      -32602,
      /params must be an array/,
    );
    failsWith(
      await rpc(t, dapp, "eth_sendTransaction", [userOp(), sponsoredMode()]),
      400,
      -32601,
      /Method not found: eth_sendTransaction/,
    );
    failsWith(await rpc(t, dapp, "__proto__", [userOp(), sponsoredMode()]), 400, -32601, /Method not found/);
    const plain = await rpc(t, dapp, "pm_sponsorUserOperation", [userOp(), sponsoredMode()], {
      contentType: "text/plain",
    });
    assert.equal(plain.status, 200, "browsers may post JSON as text/plain");
  });

  test("path: unknown apiKey, unsupported chain, another chain than the paymaster's", async () => {
    failsWith(
      await sponsorWith(userOp(), sponsoredMode(), { apiKey: "nope", chainId: 31337 }),
      401,
      -32001,
      /Unknown apiKey/,
    );
    failsWith(
      await sponsorWith(userOp(), sponsoredMode(), { apiKey: dapp.apiKey, chainId: 1 }),
      404,
      -32001,
      /Chain 1 is not supported/,
    );
    failsWith(
      await sponsorWith(userOp(), sponsoredMode(), { apiKey: dapp.apiKey, chainId: 80002 }),
      404,
      -32001,
      /on chain 31337, not on chain 80002/,
    );
    failsWith(
      await rpc(t, dapp, "pm_sponsorUserOperation", [], { path: `/api/v1/abc/${dapp.apiKey}` }),
      404,
      -32001,
      /Chain abc/,
    );
  });

  for (const [label, op, mode, message] of [
    ["missing mode", userOp(), undefined, /params\[1\] is required/],
    ["mode object without mode", userOp(), { calculateGasLimits: false }, /params\[1\].mode is required/],
    ["unknown mode", userOp(), { mode: "FREE" }, /params\[1\].mode must be SPONSORED or ERC20/],
    [
      "ERC20 not yet",
      userOp(),
      { mode: "ERC20", tokenInfo: { feeTokenAddress: OTHER } },
      /mode ERC20 is not available/,
    ],
    ["non-hex sender", userOp({ sender: "0xZZ" }), sponsoredMode(), /params\[0\].sender must be an address/],
    ["missing sender", userOp({ sender: undefined }), sponsoredMode(), /params\[0\].sender is required/],
    ["missing nonce", userOp({ nonce: undefined }), sponsoredMode(), /params\[0\].nonce is required/],
    [
      "callData not hex",
      userOp({ callData: "hello" }),
      sponsoredMode(),
      /params\[0\].callData must be 0x-prefixed hex/,
    ],
    ["odd-length initCode", userOp({ initCode: "0x123" }), sponsoredMode(), /params\[0\].initCode/],
    ["nonce above uint256", userOp({ nonce: `0x1${"0".repeat(64)}` }), sponsoredMode(), /params\[0\].nonce must be/],
    [
      "negative gas",
      userOp({ callGasLimit: -1 }),
      sponsoredMode(),
      /params\[0\].callGasLimit must be a non-negative integer/,
    ],
    ["fractional gas", userOp({ callGasLimit: 1.5 }), sponsoredMode(), /params\[0\].callGasLimit/],
    [
      "gas out of range",
      userOp({ callGasLimit: "100000000000" }),
      sponsoredMode(),
      /params\[0\].callGasLimit must be at most 10000000000/,
    ],
    [
      "expiryDuration 0",
      userOp(),
      sponsoredMode({ expiryDuration: 0 }),
      /expiryDuration must be a whole number of seconds from 1 to 86400/,
    ],
    ["expiryDuration too long", userOp(), sponsoredMode({ expiryDuration: 86_401 }), /expiryDuration/],
    ["expiryDuration as text", userOp(), sponsoredMode({ expiryDuration: "300" }), /expiryDuration/],
    [
      "calculateGasLimits not boolean",
      userOp(),
      sponsoredMode({ calculateGasLimits: "yes" }),
      /calculateGasLimits must be true or false/,
    ],
    [
      "calculateGasLimits without gas",
      userOp({ callGasLimit: undefined, preVerificationGas: undefined }),
      sponsoredMode({ calculateGasLimits: true }),
      /missing: callGasLimit, preVerificationGas/,
    ],
    [
      "gas missing",
      userOp({ verificationGasLimit: undefined }),
      sponsoredMode(),
      /params\[0\] is missing verificationGasLimit/,
    ],
    ["fees missing", userOp({ maxFeePerGas: undefined }), sponsoredMode(), /params\[0\] is missing maxFeePerGas/],
    [
      "other EntryPoint",
      userOp(),
      "0x00000000000000000000000000000000000000Ff",
      /EntryPoint 0x00000000000000000000000000000000000000ff is not served on chain 31337: it serves 0x5FF137D4b0FDCD49DcA30c7CF57E578a026d2789 \(v0\.6\), 0x0000000071727De22E5E9d8BAf0edAc6f37da032 \(v0\.7\)/,
    ],
    [
      "smartAccountInfo not strings",
      userOp(),
      sponsoredMode({ sponsorshipInfo: { smartAccountInfo: { name: 1 } } }),
      /smartAccountInfo.name must be a string/,
    ],
    [
      "webhookData not an object",
      userOp(),
      sponsoredMode({ sponsorshipInfo: { webhookData: "x" } }),
      /webhookData must be an object/,
    ],
  ] as const) {
    test(`params: ${label}`, async () => {
      const params = mode === undefined ? [op] : [op, mode];
      failsWith(await rpc(t, dapp, "pm_sponsorUserOperation", params), 400, -32602, message);
    });
  }
});

describe("CORS", () => {
  test("the preflight is answered and every answer allows any origin", async () => {
    const preflight = await t.app.inject({
      method: "OPTIONS",
      url: `/api/v1/31337/${dapp.apiKey}`,
      headers: { origin: "https://wallet.example", "access-control-request-method": "POST" },
    });
    assert.equal(preflight.statusCode, 204);
    assert.equal(preflight.headers["access-control-allow-origin"], "*");
    assert.match(String(preflight.headers["access-control-allow-headers"]), /content-type/);
    const reply = await sponsorWith(userOp());
    assert.equal(reply.headers["access-control-allow-origin"], "*");
    const error = await rpc(t, dapp, "pm_sponsorUserOperation", [userOp()]);
    assert.equal(error.headers["access-control-allow-origin"], "*");
  });
});
