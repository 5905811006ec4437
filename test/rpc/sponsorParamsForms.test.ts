// pm_sponsorUserOperation's two params forms: Biconomy's `[userOp, modeObject]`, where a refusal is a result with
// `paymasterAndData: "0x"` and the reason, and permissionless's `[userOp, entryPoint, context?]`, whose context has the
// mode object's fields and where a refusal is a -32003 error with the reason. In both, a request that names no account
// has its callData read by the layout its selector belongs to.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { encodeFunctionData, type Hex, parseAbi, size } from "viem";
import { ENTRY_POINT_V06_ADDRESS } from "../../src/bindings/entryPoints/entryPoint";
import { decodeVerifyingPaymasterAndData } from "../../src/bindings/paymasters/paymasterAndData";
import { listSponsorships } from "../../src/storage/sponsorships";
import { type Dapp, startTestApp, type TestApp } from "../helpers/app";
import { fundedDapp, rpc } from "../helpers/dappSetup";

const TARGET = "0x1111111111111111111111111111111111111111";
const OTHER = "0x2222222222222222222222222222222222222222";
const targetAbi = parseAbi(["function mint(uint256 amount)"]);
const accounts = parseAbi([
  "function execute_ncC(address dest, uint256 value, bytes func)",
  "function executeBatch(address[] dest, bytes[] func)",
]);
const mint = encodeFunctionData({ abi: targetAbi, functionName: "mint", args: [5n] });
/** SimpleAccount's executeBatch (selector 0x18dfb3c7), which no Biconomy layout has. */
const simpleBatch = (to: Hex = TARGET) =>
  encodeFunctionData({
    abi: accounts,
    functionName: "executeBatch",
    args: [
      [to, TARGET],
      [mint, "0x"],
    ],
  });
const biconomyCall = (to: Hex) =>
  encodeFunctionData({ abi: accounts, functionName: "execute_ncC", args: [to, 0n, mint] });
const INFINITISM = { name: "INFINITISM", version: "1.0.0" };
const BICONOMY = { name: "BICONOMY", version: "2.0.0" };
const naming = (smartAccountInfo: unknown) => ({ sponsorshipInfo: { smartAccountInfo } });

let t: TestApp;
let dapp: Dapp;
let nonce = 0;

before(async () => {
  t = await startTestApp();
  dapp = await fundedDapp(t, { contract: { address: TARGET, abi: targetAbi, methods: ["mint"] } });
});
after(() => t.close());

/** An operation with every gas field, as permissionless sends it after the bundler's estimate; a new nonce each time. */
const userOp = (callData: Hex, overrides: Record<string, unknown> = {}) => ({
  sender: "0x4dF23B78543F5c2F9CBCDF09956288B3e97bb9a4",
  nonce: `0x${(++nonce).toString(16)}`,
  initCode: "0x",
  callData,
  callGasLimit: "0x1a930",
  verificationGasLimit: "0xdf21",
  preVerificationGas: "0x1267c",
  maxFeePerGas: "0xc02244",
  maxPriorityFeePerGas: "0xf4240",
  paymasterAndData: "0x",
  signature: "0x",
  ...overrides,
});
const permissionless = (op: unknown, ...context: unknown[]) =>
  rpc(t, dapp, "pm_sponsorUserOperation", [op, ENTRY_POINT_V06_ADDRESS, ...context]);
const biconomy = (op: unknown, mode: Record<string, unknown> = {}) =>
  rpc(t, dapp, "pm_sponsorUserOperation", [op, { mode: "SPONSORED", calculateGasLimits: false, ...mode }]);

type Reply = Awaited<ReturnType<typeof rpc>>;
const signed = (reply: Reply) => {
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  assert.equal(reply.body.result?.reason, undefined, reply.body.result?.reason);
  assert.equal(size(reply.body.result.paymasterAndData), 276);
  return reply.body.result;
};
const refusedAsError = (reply: Reply, message: RegExp) => {
  assert.equal(reply.status, 400, JSON.stringify(reply.body));
  assert.equal(reply.body.result, undefined);
  assert.equal(reply.body.error?.code, -32003);
  assert.match(reply.body.error?.message ?? "", message);
};
const refusedAsResult = (reply: Reply, reason: RegExp) => {
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  assert.equal(reply.body.result.paymasterAndData, "0x");
  assert.match(reply.body.result.reason ?? "", reason);
};
const invalid = (reply: Reply, message: RegExp) => {
  assert.equal(reply.status, 400, JSON.stringify(reply.body));
  assert.equal(reply.body.error?.code, -32602);
  assert.match(reply.body.error?.message ?? "", message);
};

describe("permissionless's context, params[2]", () => {
  test("its smartAccountInfo names the account: SimpleAccount's executeBatch is sponsored as INFINITISM 1.0.0", async () => {
    signed(await permissionless(userOp(simpleBatch()), naming(INFINITISM)));
  });

  test("an account it names is decoded as that account only", async () => {
    refusedAsError(
      await permissionless(userOp(simpleBatch()), naming(BICONOMY)),
      /^Not sponsored: Smart contract data not found: unknown callData layout: selector 0x18dfb3c7 of BICONOMY 2.0.0$/,
    );
  });

  test("its expiryDuration sets the signature's window", async () => {
    const before = Math.floor(Date.now() / 1000);
    const result = signed(await permissionless(userOp(simpleBatch()), { expiryDuration: 3600 }));
    const { validUntil } = decodeVerifyingPaymasterAndData(result.paymasterAndData);
    assert.ok(validUntil >= before + 3600 && validUntil <= before + 3602, `validUntil ${validUntil}`);
  });

  test("its calculateGasLimits asks for an estimate (which this chain, with no RPC, cannot give)", async () => {
    const op = userOp(simpleBatch(), { callGasLimit: undefined, verificationGasLimit: undefined });
    invalid(
      await permissionless(op, { calculateGasLimits: true }),
      /^Chain 31337 \(local\) cannot estimate gas: .*missing: callGasLimit, verificationGasLimit/,
    );
    invalid(await permissionless(op), /^params\[0\] is missing callGasLimit, verificationGasLimit/);
  });

  test("its fields are checked as the mode object's are, and it serves SPONSORED mode only", async () => {
    const op = userOp(simpleBatch());
    invalid(await permissionless(op, "INFINITISM"), /^params\[2\] must be an object/);
    invalid(await permissionless(op, { expiryDuration: 0 }), /^params\[2\].expiryDuration must be a whole number/);
    invalid(
      await permissionless(op, naming({ name: "INFINITISM" })),
      /^params\[2\].sponsorshipInfo.smartAccountInfo.version must be a string/,
    );
    invalid(
      await permissionless(op, { mode: "ERC20", tokenInfo: { feeTokenAddress: OTHER } }),
      /^params\[2\].mode: a context after the EntryPoint address serves SPONSORED mode; for ERC20 send the mode object as params\[1\]/,
    );
    signed(await permissionless(op, { mode: "SPONSORED", ...naming(INFINITISM), sponsorshipPolicyId: "sp_ignored" }));
    signed(await permissionless(userOp(simpleBatch()), null));
  });
});

describe("refusals: an error after an EntryPoint address, a 0x result after a mode object", () => {
  test("permissionless's form, with or without a context: -32003 with the rule's reason, and the refusal is recorded", async () => {
    const op = userOp(simpleBatch(OTHER));
    const message =
      /^Not sponsored: Smart contract data not found: 0x2222222222222222222222222222222222222222 is not a whitelisted contract$/;
    refusedAsError(await permissionless(op), message);
    refusedAsError(await permissionless(op, naming(INFINITISM)), message);
    refusedAsError(await rpc(t, dapp, "pm_getFeeQuoteOrData", [op, ENTRY_POINT_V06_ADDRESS]), message);
    const records = (await listSponsorships(t.db, dapp.paymasterId)).filter(
      (r) => r.nonce === String(BigInt(op.nonce)),
    );
    assert.equal(records.length, 3);
    assert.ok(records.every((r) => !r.sponsored && r.reason?.includes("is not a whitelisted contract")));
  });

  test("every refusal is an error there, not only the whitelist's: here rule 2, wallet deployment", async () => {
    refusedAsError(
      await permissionless(userOp(simpleBatch(), { initCode: "0x9406cc6185a346906296840746125a0e449764545fbfb9cf" })),
      /^Not sponsored: Wallet deployment is not sponsored/,
    );
  });

  test("Biconomy's form keeps the 0x result with the reason", async () => {
    refusedAsResult(await biconomy(userOp(simpleBatch(OTHER))), /is not a whitelisted contract/);
  });

  test("bad params stay -32602 in both forms", async () => {
    invalid(await permissionless(userOp(simpleBatch(), { nonce: "x" })), /^params\[0\].nonce/);
    invalid(
      await rpc(t, dapp, "pm_sponsorUserOperation", [
        userOp(simpleBatch()),
        "0x00000000000000000000000000000000000000Ff",
      ]),
      /EntryPoint 0x00000000000000000000000000000000000000ff is not served on chain 31337: it serves 0x5FF137D4b0FDCD49DcA30c7CF57E578a026d2789 \(v0\.6\), 0x0000000071727De22E5E9d8BAf0edAc6f37da032 \(v0\.7\)/,
    );
  });
});

describe("no account named: the layout follows from the selector", () => {
  test("SimpleAccount's executeBatch is sponsored in both forms", async () => {
    signed(await permissionless(userOp(simpleBatch())));
    signed(await permissionless(userOp(simpleBatch()), {}));
    signed(await biconomy(userOp(simpleBatch())));
  });

  test("Biconomy's own selectors still decode as Biconomy 2.0.0 (the old default)", async () => {
    signed(await biconomy(userOp(biconomyCall(TARGET))));
    refusedAsResult(
      await biconomy(userOp(biconomyCall(OTHER))),
      /0x2222222222222222222222222222222222222222 is not a whitelisted/,
    );
  });

  test("a selector of no known layout is refused with how to name the account and the layouts known", async () => {
    const reason =
      /^Smart contract data not found: unknown callData layout: selector 0xdeadbeef is no execute or executeBatch method of a known account; name the account in sponsorshipInfo\.smartAccountInfo \(\{"name", "version"\}\); known accounts: BICONOMY 2\.0\.0, BICONOMY 1\.0\.0, INFINITISM 1\.0\.0, INFINITISM 0\.7\.0, INFINITISM 0\.8\.0, SAFE 1\.4\.1, ERC7579 1\.0\.0, COINBASE_SMART_WALLET 1$/;
    refusedAsResult(await biconomy(userOp("0xdeadbeef00")), reason);
    refusedAsError(
      await permissionless(userOp("0xdeadbeef00")),
      new RegExp(`^Not sponsored: ${reason.source.slice(1)}`),
    );
  });

  test("a named account is still decoded as itself only, in the mode object too", async () => {
    refusedAsResult(
      await biconomy(userOp(biconomyCall(TARGET)), naming(INFINITISM)),
      /unknown callData layout: selector 0x0000189a of INFINITISM 1.0.0$/,
    );
    refusedAsResult(
      await biconomy(userOp(simpleBatch()), naming(BICONOMY)),
      /unknown callData layout: selector 0x18dfb3c7 of BICONOMY 2.0.0$/,
    );
  });
});
