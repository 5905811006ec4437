// The JSON-RPC methods for EntryPoint v0.7 and v0.8 operations, in process with real storage: the request's EntryPoint
// picks the version; the stub has the final length; the signed fields verify against VerifyingPaymasterV07's hash
// with the service's key and the record names the operation by the EntryPoint's userOpHash; and every bad input,
// unserved version, ERC20 request and wrong params form is refused with the field and the reason. On-chain proof is
// test/e2e/erc7677V07.test.ts.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type Address, concat, encodeFunctionData, type Hex, parseAbi, recoverMessageAddress, size } from "viem";
import { ENTRY_POINT_V06_ADDRESS } from "../../src/bindings/entryPoints/entryPoint";
import { ENTRY_POINT_V07_ADDRESS, ENTRY_POINT_V08_ADDRESS } from "../../src/bindings/entryPoints/entryPointV07";
import { uint128Bytes } from "../../src/bindings/entryPoints/packedUserOperation";
import { getUserOpHashV07, packUserOperation } from "../../src/bindings/entryPoints/userOperationV07";
import {
  decodeVerifyingPaymasterAndDataV07,
  getVerifyingPaymasterHashV07,
} from "../../src/bindings/paymasters/paymasterAndDataV07";
import {
  PAYMASTER_POST_OP_GAS_LIMIT_V07,
  PAYMASTER_VERIFICATION_GAS_LIMIT_V07,
} from "../../src/bindings/paymasters/verifyingPaymasterGasV07";
import { LOCAL_ENTRY_POINT_STACKS } from "../../src/chain/localAddresses";
import type { ChainConfig } from "../../src/config";
import { listSponsorships } from "../../src/storage/sponsorships";
import { type Dapp, startTestApp, TEST_CHAINS, type TestApp } from "../helpers/app";
import { fundedDapp, rpc } from "../helpers/dappSetup";
import { answeredUserOpV07, userOpV07 } from "../helpers/userOps";

const CHAIN_ID = 31337;
const TARGET: Address = "0x1111111111111111111111111111111111111111";
const STRANGER: Address = "0x3333333333333333333333333333333333333333";
const SENDER: Address = "0x4df23b78543f5c2f9cbcdf09956288b3e97bb9a4";
const simpleAccount = parseAbi(["function execute(address dest, uint256 value, bytes func)"]);
const call = (to: Address) => encodeFunctionData({ abi: simpleAccount, functionName: "execute", args: [to, 0n, "0x"] });

let t: TestApp;
let dapp: Dapp;
let nonce = 0;

before(async () => {
  // Chain 84532 serves v0.7 without a paymaster of ours: the refusal of a served version with nothing to sign with.
  const chains = new Map<number, ChainConfig>([
    ...TEST_CHAINS,
    [84532, { chainId: 84532, name: "Base Sepolia", entryPoints: { "0.7": {} } }],
  ]);
  t = await startTestApp({ chains });
  dapp = await fundedDapp(t, { walletDeployment: true, contract: { address: TARGET } });
});
after(() => t.close());

/** A v0.7 operation as viem sends it after the bundler's estimate; a new nonce each time. */
const userOp = (overrides: Record<string, unknown> = {}) =>
  userOpV07(SENDER, ++nonce, { callData: call(TARGET), signature: "0x", ...overrides });

const erc7677 = (method: string, op: unknown, entryPoint: string = ENTRY_POINT_V07_ADDRESS, context?: unknown) =>
  rpc(t, dapp, method, [op, entryPoint, `0x${CHAIN_ID.toString(16)}`, ...(context === undefined ? [] : [context])]);

function result(reply: Awaited<ReturnType<typeof rpc>>): Record<string, string> {
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  assert.equal(reply.body.error, undefined, JSON.stringify(reply.body.error));
  return reply.body.result as Record<string, string>;
}

function error(reply: Awaited<ReturnType<typeof rpc>>, code: number, message: RegExp) {
  const body = reply.body as { error?: { code: number; message: string } };
  assert.ok(body.error, JSON.stringify(reply.body));
  assert.equal(body.error.code, code, body.error.message);
  assert.match(body.error.message, message);
}

/** The operation as it will go on chain, with the paymaster fields of an answer put in. */
function withAnswer(op: ReturnType<typeof userOp>, answer: Record<string, string>, version: "0.7" | "0.8") {
  const full = answeredUserOpV07(op, answer);
  const paymasterAndData = concat([
    full.paymaster as Address,
    uint128Bytes("v", full.paymasterVerificationGasLimit ?? 0n),
    uint128Bytes("p", full.paymasterPostOpGasLimit ?? 0n),
    full.paymasterData as Hex,
  ]);
  const terms = decodeVerifyingPaymasterAndDataV07(paymasterAndData);
  const hash = getVerifyingPaymasterHashV07(packUserOperation(full), { ...terms, chainId: CHAIN_ID });
  const entryPoint = version === "0.7" ? ENTRY_POINT_V07_ADDRESS : ENTRY_POINT_V08_ADDRESS;
  return { full, terms, hash, userOpHash: getUserOpHashV07(full, entryPoint, CHAIN_ID, version) };
}

for (const version of ["0.7", "0.8"] as const) {
  const entryPoint = version === "0.7" ? ENTRY_POINT_V07_ADDRESS : ENTRY_POINT_V08_ADDRESS;
  const paymaster = LOCAL_ENTRY_POINT_STACKS[version].verifyingPaymaster;

  describe(`ERC-7677 for EntryPoint v${version}`, () => {
    test("the stub: our paymaster, its gas limits as hex, paymasterData of the final length, isFinal false", async () => {
      const stub = result(await erc7677("pm_getPaymasterStubData", userOp(), entryPoint));
      assert.deepEqual(Object.keys(stub).sort(), [
        "isFinal",
        "paymaster",
        "paymasterData",
        "paymasterPostOpGasLimit",
        "paymasterVerificationGasLimit",
      ]);
      assert.equal(stub.paymaster, paymaster);
      assert.equal(stub.isFinal, false);
      assert.equal(BigInt(stub.paymasterVerificationGasLimit as string), PAYMASTER_VERIFICATION_GAS_LIMIT_V07);
      assert.equal(BigInt(stub.paymasterPostOpGasLimit as string), PAYMASTER_POST_OP_GAS_LIMIT_V07);
      const op = userOp();
      const data = result(await erc7677("pm_getPaymasterData", op, entryPoint));
      assert.equal(size(stub.paymasterData as Hex), 256);
      assert.equal(size(stub.paymasterData as Hex), size(data.paymasterData as Hex), "stub and final, same length");
      // The stub's signature recovers to nobody: it is not the service's.
      const stubbed = withAnswer(op, stub, version);
      const stubSigner = await recoverMessageAddress({
        message: { raw: stubbed.hash },
        signature: stubbed.terms.signature,
      });
      assert.notEqual(stubSigner, t.ctx.signer.address);
    });

    test("the signed fields verify with the service's key and the record names the EntryPoint's userOpHash", async () => {
      const op = userOp();
      const answer = result(await erc7677("pm_getPaymasterData", op, entryPoint));
      assert.deepEqual(Object.keys(answer).sort(), [
        "paymaster",
        "paymasterData",
        "paymasterPostOpGasLimit",
        "paymasterVerificationGasLimit",
      ]);
      const { terms, hash, userOpHash } = withAnswer(op, answer, version);
      assert.equal(terms.paymaster, paymaster);
      assert.equal(
        await recoverMessageAddress({ message: { raw: hash }, signature: terms.signature }),
        t.ctx.signer.address,
      );
      const [record] = (await listSponsorships(t.db, dapp.paymasterId)).filter(
        (r) => r.nonce === String(BigInt(op.nonce)),
      );
      assert.ok(record?.sponsored);
      assert.equal(record.user_op_hash, userOpHash);
    });

    test("a paymaster verification gas limit above ours (a bundler's estimate) is kept; the postOp limit is ours", async () => {
      const answer = result(
        await erc7677(
          "pm_getPaymasterData",
          userOp({ paymasterVerificationGasLimit: "0x186a0", paymasterPostOpGasLimit: "0xf4240" }),
          entryPoint,
        ),
      );
      assert.equal(answer.paymasterVerificationGasLimit, "0x186a0");
      assert.equal(BigInt(answer.paymasterPostOpGasLimit as string), PAYMASTER_POST_OP_GAS_LIMIT_V07);
    });

    test("a call that is not whitelisted is refused with -32003 and the rule's reason", async () => {
      error(
        await erc7677("pm_getPaymasterData", userOp({ callData: call(STRANGER) }), entryPoint),
        -32003,
        new RegExp(`^Not sponsored: Smart contract data not found: ${STRANGER} is not a whitelisted contract`),
      );
    });

    test("gas missing at pm_getPaymasterData is -32602 naming the fields", async () => {
      error(
        await erc7677("pm_getPaymasterData", userOp({ callGasLimit: undefined, preVerificationGas: null }), entryPoint),
        -32602,
        /^params\[0\] is missing callGasLimit, preVerificationGas/,
      );
    });
  });
}

describe("EntryPoint v0.8: EIP-7702", () => {
  const auth = {
    chainId: "0x7a69",
    address: LOCAL_ENTRY_POINT_STACKS["0.8"].simple7702Account,
    nonce: "0x0",
    yParity: "0x1",
    r: `0x${"11".repeat(32)}`,
    s: `0x${"22".repeat(32)}`,
  };

  test("an operation with an authorization is a deployment, signed when the policy allows it", async () => {
    const op = userOp({ eip7702Auth: auth });
    const answer = result(await erc7677("pm_getPaymasterData", op, ENTRY_POINT_V08_ADDRESS));
    const { full } = withAnswer(op, answer, "0.8");
    const userOpHash = getUserOpHashV07(
      {
        ...full,
        eip7702Auth: {
          chainId: 31337n,
          address: auth.address as Address,
          nonce: 0n,
          yParity: 1,
          r: auth.r as Hex,
          s: auth.s as Hex,
        },
      },
      ENTRY_POINT_V08_ADDRESS,
      CHAIN_ID,
      "0.8",
    );
    const [record] = (await listSponsorships(t.db, dapp.paymasterId)).filter(
      (r) => r.nonce === String(BigInt(op.nonce)),
    );
    assert.equal(record?.user_op_hash, userOpHash, "the v0.8 hash puts the delegate in place of the marker");
  });

  test("the 0x7702 factory marker is taken on v0.8", async () => {
    result(await erc7677("pm_getPaymasterStubData", userOp({ factory: "0x7702" }), ENTRY_POINT_V08_ADDRESS));
  });

  test("an authorization or the marker on v0.7 is -32602", async () => {
    error(
      await erc7677("pm_getPaymasterStubData", userOp({ eip7702Auth: auth }), ENTRY_POINT_V07_ADDRESS),
      -32602,
      /^params\[0\]\.eip7702Auth: EIP-7702 operations are for EntryPoint v0\.8/,
    );
    error(
      await erc7677("pm_getPaymasterStubData", userOp({ factory: "0x7702" }), ENTRY_POINT_V07_ADDRESS),
      -32602,
      /^params\[0\]\.factory: the EIP-7702 marker 0x7702 is for EntryPoint v0\.8 and later/,
    );
  });
});

describe("what is refused, and how", () => {
  test("bad fields of a v0.7 operation name the field", async () => {
    error(await erc7677("pm_getPaymasterStubData", userOp({ nonce: "x" })), -32602, /^params\[0\]\.nonce/);
    error(await erc7677("pm_getPaymasterStubData", userOp({ factory: "0x12" })), -32602, /^params\[0\]\.factory/);
    error(
      await erc7677("pm_getPaymasterStubData", userOp({ factoryData: "0xabcd" })),
      -32602,
      /^params\[0\]\.factoryData is given without a factory/,
    );
  });

  test("an EntryPoint the chain does not serve is -32602 naming the ones it does", async () => {
    error(
      await erc7677("pm_getPaymasterStubData", userOp(), "0x00000000000000000000000000000000000000ff"),
      -32602,
      new RegExp(
        `^params\\[1\\]: EntryPoint 0x0{38}ff is not served on chain 31337: it serves ${ENTRY_POINT_V06_ADDRESS} ` +
          `\\(v0\\.6\\), ${ENTRY_POINT_V07_ADDRESS} \\(v0\\.7\\), ${ENTRY_POINT_V08_ADDRESS} \\(v0\\.8\\)`,
      ),
    );
  });

  test("a served version without our paymaster is -32003 with the reason", async () => {
    const other = await t.dapp({ chainId: 84532 });
    const reply = await rpc(t, other, "pm_getPaymasterStubData", [userOp(), ENTRY_POINT_V07_ADDRESS, "0x14a34"]);
    error(
      reply,
      -32003,
      /^Not sponsored: EntryPoint 0x0000000071727De22E5E9d8BAf0edAc6f37da032 is not served on chain 84532: the chains file names no verifying paymaster for EntryPoint v0\.7/,
    );
  });

  test("ERC20 mode for v0.7 (mode or Pimlico's token) on a chain without fee tokens is -32003 saying so", async () => {
    const noTokens =
      /^Not sponsored: EntryPoint 0x\S+ is not served on chain 31337: the chains file lists no fee tokens for it \(ERC20 mode\)$/;
    const erc20Mode = { mode: "ERC20", tokenInfo: { feeTokenAddress: TARGET } };
    error(await erc7677("pm_getPaymasterData", userOp(), ENTRY_POINT_V07_ADDRESS, erc20Mode), -32003, noTokens);
    error(await erc7677("pm_getPaymasterData", userOp(), ENTRY_POINT_V07_ADDRESS, { token: TARGET }), -32003, noTokens);
    error(
      await rpc(t, dapp, "pm_sponsorUserOperation", [userOp(), ENTRY_POINT_V08_ADDRESS, { token: TARGET }]),
      -32003,
      noTokens,
    );
  });

  test("Biconomy's form [userOp, modeObject] with v0.7 members is -32602 pointing to the EntryPoint form", async () => {
    for (const method of ["pm_sponsorUserOperation", "pm_getFeeQuoteOrData"]) {
      error(
        await rpc(t, dapp, method, [userOp({ factory: TARGET, factoryData: "0x" }), { mode: "SPONSORED" }]),
        -32602,
        /^params\[0\] has EntryPoint v0\.7 members .* for v0\.7 or v0\.8 send \[userOp, entryPointAddress, context\]/,
      );
    }
  });
});

describe("pm_sponsorUserOperation [userOp, entryPoint, context] for v0.7, on a chain without a bundler", () => {
  test("with the gas sent: Pimlico's result, every number hex, signed over exactly those values", async () => {
    const op = userOp();
    const answer = result(await rpc(t, dapp, "pm_sponsorUserOperation", [op, ENTRY_POINT_V07_ADDRESS, {}]));
    assert.deepEqual(Object.keys(answer).sort(), [
      "callGasLimit",
      "paymaster",
      "paymasterData",
      "paymasterPostOpGasLimit",
      "paymasterVerificationGasLimit",
      "preVerificationGas",
      "verificationGasLimit",
    ]);
    assert.equal(answer.callGasLimit, op.callGasLimit);
    assert.equal(answer.verificationGasLimit, op.verificationGasLimit);
    assert.equal(answer.preVerificationGas, op.preVerificationGas);
    const { terms, hash } = withAnswer(op, answer, "0.7");
    assert.equal(
      await recoverMessageAddress({ message: { raw: hash }, signature: terms.signature }),
      t.ctx.signer.address,
    );
  });

  test("pm_getFeeQuoteOrData after a v0.7 EntryPoint answers as pm_sponsorUserOperation does", async () => {
    const answer = result(await rpc(t, dapp, "pm_getFeeQuoteOrData", [userOp(), ENTRY_POINT_V07_ADDRESS]));
    assert.equal(answer.paymaster, LOCAL_ENTRY_POINT_STACKS["0.7"].verifyingPaymaster);
    assert.equal(size(answer.paymasterData as Hex), 256);
  });

  test("without the gas, or with zeros, on a chain with neither node nor bundler: -32602 naming the fields", async () => {
    const refusal = (fields: string) =>
      new RegExp(
        `^params\\[0\\] is missing ${fields} \\(or sent it as 0\\): chain 31337 \\(local\\) has neither a node ` +
          "\\(rpcUrl\\) nor a bundler \\(bundlerUrl\\) to estimate gas with, so send the gas limits",
      );
    error(
      await rpc(t, dapp, "pm_sponsorUserOperation", [userOp({ callGasLimit: undefined }), ENTRY_POINT_V07_ADDRESS]),
      -32602,
      refusal("callGasLimit"),
    );
    const zeros = userOp({ callGasLimit: "0x0", verificationGasLimit: "0x0", preVerificationGas: "0x0" });
    error(
      await rpc(t, dapp, "pm_sponsorUserOperation", [zeros, ENTRY_POINT_V07_ADDRESS]),
      -32602,
      refusal("callGasLimit, verificationGasLimit, preVerificationGas"),
    );
  });

  test("ERC-7677's second step never signs a zero gas limit: -32602 naming it", async () => {
    error(
      await erc7677("pm_getPaymasterData", userOp({ verificationGasLimit: "0x0" }), ENTRY_POINT_V07_ADDRESS, {}),
      -32602,
      /^params\[0\]\.verificationGasLimit is 0: an operation signed with no gas there can never be mined/,
    );
  });

  test("a refusal is -32003 with the reason", async () => {
    error(
      await rpc(t, dapp, "pm_sponsorUserOperation", [userOp({ callData: call(STRANGER) }), ENTRY_POINT_V07_ADDRESS]),
      -32003,
      /^Not sponsored: Smart contract data not found/,
    );
  });
});
