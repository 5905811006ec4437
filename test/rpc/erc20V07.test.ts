// ERC20 mode for EntryPoint v0.7 and v0.8 operations, in process with real storage and a fixed-rate fee token (no
// node, so the balance check is left to the contract): ERC-7677 with Pimlico's `token` in the context (stub of the
// final length, then paymaster fields signed for TokenPaymasterV07's hash by the service's key and recorded under the
// EntryPoint's userOpHash), pimlico's pm_sponsorUserOperation with a token, pm_getFeeQuoteOrData's v0.7 form with
// maxGasFee from the v0.7 prefund, ERC-7677 with a token for a v0.6 operation (v0.6's token paymaster), and the
// refusals: an unknown or malformed token, a v0.6 verificationGasLimit too small for the token charge.
// On-chain proof is test/e2e/erc20V07.test.ts.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  type Address,
  concat,
  encodeFunctionData,
  formatUnits,
  type Hex,
  hexToBigInt,
  parseAbi,
  recoverMessageAddress,
  size,
} from "viem";
import { generatePrivateKey } from "viem/accounts";
import { ENTRY_POINT_V06_ADDRESS } from "../../src/bindings/entryPoints/entryPoint";
import { ENTRY_POINT_V07_ADDRESS, ENTRY_POINT_V08_ADDRESS } from "../../src/bindings/entryPoints/entryPointV07";
import { uint128Bytes } from "../../src/bindings/entryPoints/packedUserOperation";
import {
  getUserOpHashV07,
  packUserOperation,
  type UserOperationV07,
} from "../../src/bindings/entryPoints/userOperationV07";
import { getUserOpHash } from "../../src/bindings/entryPoints/userOpHash";
import {
  decodeTokenPaymasterAndData,
  getTokenPaymasterHash,
  TOKEN_PAYMASTER_AND_DATA_LENGTH,
} from "../../src/bindings/paymasters/tokenPaymasterAndData";
import {
  decodeTokenPaymasterAndDataV07,
  getTokenPaymasterHashV07,
  maxTokenCostV07,
  TOKEN_PAYMASTER_DATA_V07_LENGTH,
  TOKEN_PAYMASTER_V07_POST_OP_GAS_LIMIT,
  TOKEN_PAYMASTER_V07_VERIFICATION_GAS_LIMIT,
} from "../../src/bindings/paymasters/tokenPaymasterAndDataV07";
import { LOCAL_ENTRY_POINT_STACKS, LOCAL_TOKEN_PAYMASTER_ADDRESS } from "../../src/chain/localAddresses";
import type { TokenConfig } from "../../src/config";
import { createSigner } from "../../src/signer/signer";
import { listSponsorships } from "../../src/storage/sponsorships";
import { type Dapp, startTestApp, type TestApp } from "../helpers/app";
import { rpc } from "../helpers/dappSetup";
import { answeredUserOpV07, ESTIMATED_GAS, userOpV06, userOpV07 } from "../helpers/userOps";

const CHAIN_ID = 31337;
const TOKEN: Address = "0x00000000000000000000000000000000000000bb";
const UNKNOWN_TOKEN: Address = "0x00000000000000000000000000000000000000aa";
/** 2,500 six-decimal units per ether, as a fixed rate. */
const RATE = 2_500n * 10n ** 6n;
const MARKUP = 1_100_000;
const FEE_TOKEN: TokenConfig = {
  address: TOKEN,
  symbol: "FEE",
  decimals: 6,
  price: { fixedRate: RATE },
  markup: MARKUP,
};
const SENDER: Address = "0x4df23b78543f5c2f9cbcdf09956288b3e97bb9a4";
const TARGET: Address = "0x1111111111111111111111111111111111111111";
const simpleAccount = parseAbi(["function execute(address dest, uint256 value, bytes func)"]);
const signer = createSigner(generatePrivateKey());

let t: TestApp;
let dapp: Dapp;
let nonce = 0;

before(async () => {
  t = await startTestApp({
    signer,
    chains: new Map([[CHAIN_ID, { chainId: CHAIN_ID, name: "local", tokens: [FEE_TOKEN] }]]),
  });
  // ERC20 mode needs no funding wallet, policy or whitelist: a bare dApp's apiKey is enough.
  dapp = await t.dapp();
});
after(() => t.close());

const executeTarget = () =>
  encodeFunctionData({ abi: simpleAccount, functionName: "execute", args: [TARGET, 0n, "0x"] });
const userOp = (overrides: Record<string, unknown> = {}) =>
  userOpV07(SENDER, ++nonce, { callData: executeTarget(), signature: "0x", ...overrides });

const chainIdHex = `0x${CHAIN_ID.toString(16)}`;

function result(reply: Awaited<ReturnType<typeof rpc>>): Record<string, unknown> {
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  assert.equal(reply.body.error, undefined, JSON.stringify(reply.body.error));
  return reply.body.result as Record<string, unknown>;
}

function error(reply: Awaited<ReturnType<typeof rpc>>, code: number, message: RegExp) {
  const body = reply.body as { error?: { code: number; message: string } };
  assert.ok(body.error, JSON.stringify(reply.body));
  assert.equal(body.error.code, code, body.error.message);
  assert.match(body.error.message, message);
}

const tokenPaymaster = (version: "0.7" | "0.8") => LOCAL_ENTRY_POINT_STACKS[version].tokenPaymaster;
const entryPointOf = (version: "0.7" | "0.8") =>
  version === "0.7" ? ENTRY_POINT_V07_ADDRESS : ENTRY_POINT_V08_ADDRESS;

/** The operation as it goes on chain, with the answer's paymaster fields in. */
function onChain(op: ReturnType<typeof userOp>, answer: Record<string, unknown>, version: "0.7" | "0.8") {
  const complete = answeredUserOpV07(op, answer);
  const paymasterAndData = concat([
    complete.paymaster as Address,
    uint128Bytes("paymasterVerificationGasLimit", complete.paymasterVerificationGasLimit ?? 0n),
    uint128Bytes("paymasterPostOpGasLimit", complete.paymasterPostOpGasLimit ?? 0n),
    complete.paymasterData as Hex,
  ]);
  return {
    complete,
    terms: decodeTokenPaymasterAndDataV07(paymasterAndData),
    userOpHash: getUserOpHashV07(complete, entryPointOf(version), CHAIN_ID, version),
  };
}

/** The signature verifies against TokenPaymasterV07's hash with the service's key, over the fee token's terms. */
async function checkSigned(op: ReturnType<typeof userOp>, answer: Record<string, unknown>, version: "0.7" | "0.8") {
  const { complete, terms, userOpHash } = onChain(op, answer, version);
  assert.equal((answer.paymaster as string).toLowerCase(), tokenPaymaster(version).toLowerCase());
  assert.equal(terms.feeToken.toLowerCase(), TOKEN);
  assert.equal(terms.exchangeRate, RATE);
  assert.equal(terms.priceMarkup, MARKUP);
  assert.equal(terms.paymasterVerificationGasLimit, TOKEN_PAYMASTER_V07_VERIFICATION_GAS_LIMIT);
  assert.equal(terms.paymasterPostOpGasLimit, TOKEN_PAYMASTER_V07_POST_OP_GAS_LIMIT);
  const hash = getTokenPaymasterHashV07(packUserOperation(complete), {
    ...terms,
    chainId: CHAIN_ID,
    paymaster: tokenPaymaster(version),
  });
  assert.equal(await recoverMessageAddress({ message: { raw: hash }, signature: terms.signature }), signer.address);
  const records = (await listSponsorships(t.db, dapp.paymasterId)).filter((r) => r.user_op_hash === userOpHash);
  assert.equal(records.length, 1, "one record under the EntryPoint's userOpHash");
  const [outcome] = (records[0]?.rule_outcomes ?? []) as unknown as {
    rule: string;
    feeToken: string;
    maxTokenCost: string;
  }[];
  assert.ok(outcome, "the record has the ERC20 outcome");
  assert.equal(outcome.rule, "ERC20");
  assert.equal(outcome.feeToken, TOKEN);
  assert.equal(BigInt(outcome.maxTokenCost), maxTokenCostV07(terms0(complete), RATE, MARKUP));
}

function terms0(op: UserOperationV07) {
  return {
    callGasLimit: op.callGasLimit,
    verificationGasLimit: op.verificationGasLimit,
    preVerificationGas: op.preVerificationGas,
    maxFeePerGas: op.maxFeePerGas,
    paymasterVerificationGasLimit: TOKEN_PAYMASTER_V07_VERIFICATION_GAS_LIMIT,
    paymasterPostOpGasLimit: TOKEN_PAYMASTER_V07_POST_OP_GAS_LIMIT,
  };
}

for (const version of ["0.7", "0.8"] as const) {
  describe(`ERC20 mode, EntryPoint v${version}`, () => {
    test("ERC-7677 with { token }: a stub of the final length, then fields signed for the token paymaster", async () => {
      const op = userOp();
      const stub = result(
        await rpc(t, dapp, "pm_getPaymasterStubData", [op, entryPointOf(version), chainIdHex, { token: TOKEN }]),
      );
      assert.equal(stub.isFinal, false);
      assert.equal((stub.paymaster as string).toLowerCase(), tokenPaymaster(version).toLowerCase());
      assert.equal(size(stub.paymasterData as Hex), TOKEN_PAYMASTER_DATA_V07_LENGTH);
      assert.equal(hexToBigInt(stub.paymasterPostOpGasLimit as Hex), TOKEN_PAYMASTER_V07_POST_OP_GAS_LIMIT);
      const data = result(
        await rpc(t, dapp, "pm_getPaymasterData", [op, entryPointOf(version), chainIdHex, { token: TOKEN }]),
      );
      assert.equal(size(data.paymasterData as Hex), TOKEN_PAYMASTER_DATA_V07_LENGTH);
      assert.notEqual(data.paymasterData, stub.paymasterData, "signed, not the stub");
      await checkSigned(op, data, version);
    });

    test("pm_sponsorUserOperation [userOp, entryPoint, { token }]: the token paymaster's fields and the gas", async () => {
      const op = userOp();
      const answer = result(
        await rpc(t, dapp, "pm_sponsorUserOperation", [op, entryPointOf(version), { token: TOKEN }]),
      );
      assert.equal(answer.callGasLimit, op.callGasLimit);
      assert.equal(answer.verificationGasLimit, op.verificationGasLimit);
      assert.equal(answer.preVerificationGas, op.preVerificationGas);
      await checkSigned(op, answer, version);
    });
  });
}

describe("ERC20 mode for v0.7: quotes and refusals", () => {
  test("pm_getFeeQuoteOrData [userOp, entryPoint, { tokenList }]: maxGasFee from the v0.7 prefund", async () => {
    const op = userOp();
    const quote = result(
      await rpc(t, dapp, "pm_getFeeQuoteOrData", [op, ENTRY_POINT_V07_ADDRESS, { tokenList: [TOKEN, UNKNOWN_TOKEN] }]),
    );
    assert.equal(quote.mode, "ERC20");
    assert.equal((quote.paymasterAddress as string).toLowerCase(), tokenPaymaster("0.7").toLowerCase());
    assert.deepEqual(quote.unsupportedTokens, [UNKNOWN_TOKEN]);
    const [fee, ...others] = quote.feeQuotes as {
      tokenAddress: string;
      maxGasFee: number;
      premiumPercentage: string;
    }[];
    assert.ok(fee && others.length === 0, JSON.stringify(quote));
    const maximum = maxTokenCostV07(
      {
        callGasLimit: BigInt(op.callGasLimit),
        verificationGasLimit: BigInt(op.verificationGasLimit),
        preVerificationGas: BigInt(op.preVerificationGas),
        maxFeePerGas: BigInt(op.maxFeePerGas),
        paymasterVerificationGasLimit: TOKEN_PAYMASTER_V07_VERIFICATION_GAS_LIMIT,
        paymasterPostOpGasLimit: TOKEN_PAYMASTER_V07_POST_OP_GAS_LIMIT,
      },
      RATE,
      MARKUP,
    );
    assert.equal(fee.tokenAddress, TOKEN);
    assert.equal(fee.maxGasFee, Number(formatUnits(maximum, 6)));
    assert.equal(fee.premiumPercentage, "10");
  });

  test("pm_getFeeQuoteOrData for v0.7: a tokenList too long is -32602 naming params[2], where v0.7 puts the context", async () => {
    const tokenList = Array.from({ length: 51 }, (_, index) => `0x${(index + 1).toString(16).padStart(40, "0")}`);
    error(
      await rpc(t, dapp, "pm_getFeeQuoteOrData", [userOp(), ENTRY_POINT_V07_ADDRESS, { tokenList }]),
      -32602,
      /^params\[2\]\.tokenList may name at most 50 tokens$/,
    );
    error(
      await rpc(t, dapp, "pm_getFeeQuoteOrData", [
        userOp(),
        ENTRY_POINT_V07_ADDRESS,
        { mode: "ERC20", tokenInfo: { tokenList } },
      ]),
      -32602,
      /^params\[2\]\.tokenInfo\.tokenList may name at most 50 tokens$/,
    );
  });

  test("pm_getFeeQuoteOrData for v0.7 without a token in the context answers as pm_sponsorUserOperation", async () => {
    // No funding wallet is linked: SPONSORED mode refuses, which shows it was not read as a quote.
    error(
      await rpc(t, dapp, "pm_getFeeQuoteOrData", [userOp(), ENTRY_POINT_V07_ADDRESS, {}]),
      -32003,
      /^Not sponsored/,
    );
  });

  test("an unknown token is -32602 naming the tokens the chain accepts", async () => {
    const reply = await rpc(t, dapp, "pm_getPaymasterStubData", [
      userOp(),
      ENTRY_POINT_V07_ADDRESS,
      chainIdHex,
      { token: UNKNOWN_TOKEN },
    ]);
    error(reply, -32602, new RegExp(`^Fee token ${UNKNOWN_TOKEN} is not supported \\(chain 31337 accepts FEE`));
    const sponsor = await rpc(t, dapp, "pm_sponsorUserOperation", [
      userOp(),
      ENTRY_POINT_V08_ADDRESS,
      { token: UNKNOWN_TOKEN },
    ]);
    error(sponsor, -32602, /is not supported/);
  });

  test("a malformed token, and ERC20 mode without a token, are -32602 naming the field", async () => {
    error(
      await rpc(t, dapp, "pm_getPaymasterData", [userOp(), ENTRY_POINT_V07_ADDRESS, chainIdHex, { token: "0x12" }]),
      -32602,
      /^params\[3\]\.token must be a token address \(0x followed by 40 hex digits\), got "0x12"$/,
    );
    error(
      await rpc(t, dapp, "pm_getPaymasterData", [userOp(), ENTRY_POINT_V07_ADDRESS, chainIdHex, { mode: "ERC20" }]),
      -32602,
      /^params\[3\]\.token is required in ERC20 mode/,
    );
  });
});

describe("ERC20 mode through ERC-7677 for a v0.6 operation", () => {
  const v06 = (overrides: Record<string, unknown> = {}) =>
    userOpV06(SENDER, ++nonce, {
      callData: executeTarget(),
      ...ESTIMATED_GAS,
      paymasterAndData: "0x",
      signature: "0x",
      ...overrides,
    });

  test("{ token }: a 278-byte stub, then the token paymaster's paymasterAndData signed and recorded", async () => {
    const op = v06();
    const params = [op, ENTRY_POINT_V06_ADDRESS, chainIdHex, { token: TOKEN }];
    const stub = result(await rpc(t, dapp, "pm_getPaymasterStubData", params));
    assert.equal(stub.isFinal, false);
    assert.equal(size(stub.paymasterAndData as Hex), TOKEN_PAYMASTER_AND_DATA_LENGTH);
    assert.equal(decodeTokenPaymasterAndData(stub.paymasterAndData as Hex).paymaster, LOCAL_TOKEN_PAYMASTER_ADDRESS);
    const data = result(await rpc(t, dapp, "pm_getPaymasterData", params));
    const paymasterAndData = data.paymasterAndData as Hex;
    const decoded = decodeTokenPaymasterAndData(paymasterAndData);
    assert.equal(decoded.feeToken.toLowerCase(), TOKEN);
    assert.equal(decoded.exchangeRate, RATE);
    const signed = {
      sender: op.sender,
      nonce: BigInt(op.nonce),
      initCode: op.initCode as Hex,
      callData: op.callData,
      callGasLimit: BigInt(op.callGasLimit),
      verificationGasLimit: BigInt(op.verificationGasLimit),
      preVerificationGas: BigInt(op.preVerificationGas),
      maxFeePerGas: BigInt(op.maxFeePerGas),
      maxPriorityFeePerGas: BigInt(op.maxPriorityFeePerGas),
    };
    const hash = getTokenPaymasterHash(signed, {
      ...decoded,
      chainId: CHAIN_ID,
      paymaster: LOCAL_TOKEN_PAYMASTER_ADDRESS,
    });
    assert.equal(await recoverMessageAddress({ message: { raw: hash }, signature: decoded.signature }), signer.address);
    const userOpHash = getUserOpHash({ ...signed, paymasterAndData }, ENTRY_POINT_V06_ADDRESS, CHAIN_ID);
    const records = (await listSponsorships(t.db, dapp.paymasterId)).filter((r) => r.user_op_hash === userOpHash);
    assert.equal(records.length, 1, "one record under the EntryPoint's userOpHash");
  });

  test("a verificationGasLimit too small for the token charge's postOp is -32602 naming it", async () => {
    error(
      await rpc(t, dapp, "pm_getPaymasterData", [
        v06({ verificationGasLimit: "0x2710" }),
        ENTRY_POINT_V06_ADDRESS,
        chainIdHex,
        { token: TOKEN },
      ]),
      -32602,
      /^params\[0\]\.verificationGasLimit 10000 is below 60000: EntryPoint v0\.6 gives the token paymaster's postOp/,
    );
  });

  test("pimlico's form [userOp, v0.6 EntryPoint, { token }] is -32602 naming the forms that serve it", async () => {
    for (const method of ["pm_sponsorUserOperation", "pm_getFeeQuoteOrData"]) {
      error(
        await rpc(t, dapp, method, [v06(), ENTRY_POINT_V06_ADDRESS, { token: TOKEN }]),
        -32602,
        /^params\[2\]\.token: ERC20 mode for EntryPoint v0\.6 operations is served by the mode object form/,
      );
    }
  });

  test("an unknown token is -32602 naming the tokens the chain accepts", async () => {
    error(
      await rpc(t, dapp, "pm_getPaymasterStubData", [
        v06(),
        ENTRY_POINT_V06_ADDRESS,
        chainIdHex,
        { token: UNKNOWN_TOKEN },
      ]),
      -32602,
      new RegExp(`^Fee token ${UNKNOWN_TOKEN} is not supported \\(chain 31337 accepts FEE`),
    );
  });
});

describe("a permit in an ERC20 context that cannot work is -32602 naming its field, before anything is signed", () => {
  const MAX = `0x${"f".repeat(64)}`;
  const permit = (fields: Record<string, unknown>) => ({
    token: TOKEN,
    permit: { value: "1000000", deadline: MAX, signature: `0x${"11".repeat(65)}`, ...fields },
  });
  const cases: [string, unknown, RegExp][] = [
    ["a deadline short of the maximum", permit({ deadline: "1700000000" }), /^params\[3\]\.permit\.deadline must be/],
    ["a value that is no uint256", permit({ value: "-1" }), /^params\[3\]\.permit\.value must be a uint256/],
    ["no signature", permit({ signature: "0x" }), /^params\[3\]\.permit\.signature must be the owner's signature/],
    ["not an object", { token: TOKEN, permit: "0x12" }, /^params\[3\]\.permit must be an object/],
    // This chain's token is marked with no permit that runs in validation.
    ["a token without such a permit", permit({}), /^params\[3\]\.permit: fee token FEE .* has no permit that runs/],
  ];
  for (const [what, context, message] of cases) {
    test(what, async () => {
      const records = async () => (await listSponsorships(t.db, dapp.paymasterId)).length;
      const before = await records();
      for (const method of ["pm_getPaymasterStubData", "pm_getPaymasterData"]) {
        error(await rpc(t, dapp, method, [userOp(), ENTRY_POINT_V07_ADDRESS, chainIdHex, context]), -32602, message);
      }
      assert.equal(await records(), before, "nothing signed or recorded");
    });
  }

  test("a permit for a v0.6 operation: the up-front token paymaster reads v0.7's operation only", async () => {
    error(
      await rpc(t, dapp, "pm_getPaymasterData", [
        userOpV06(SENDER, ++nonce, { callData: executeTarget(), ...ESTIMATED_GAS, signature: "0x" }),
        ENTRY_POINT_V06_ADDRESS,
        chainIdHex,
        permit({}),
      ]),
      -32602,
      /^params\[3\]\.permit: a permit is taken by the up-front token paymaster, on EntryPoint v0\.7 and later only/,
    );
  });
});

test("a node that does not answer leaves ERC20 mode without a permit to the approve-in-batch token paymaster, as before", async () => {
  // A closed port: every read fails at once. The fixed rate needs no read, the balance check leaves it to the contract.
  const permitToken = { ...FEE_TOKEN, permit: true };
  const dead = await startTestApp({
    signer,
    chains: new Map([
      [CHAIN_ID, { chainId: CHAIN_ID, name: "local", rpcUrl: "http://127.0.0.1:9", tokens: [permitToken] }],
    ]),
  });
  try {
    const deadDapp = await dead.dapp();
    const op = userOp(ESTIMATED_GAS);
    const stub = result(
      await rpc(dead, deadDapp, "pm_getPaymasterStubData", [op, ENTRY_POINT_V07_ADDRESS, chainIdHex, { token: TOKEN }]),
    );
    assert.equal((stub.paymaster as string).toLowerCase(), tokenPaymaster("0.7").toLowerCase());
    assert.equal(stub.permitTypedData, undefined, "no Permit offered: its nonce cannot be read");
    const data = result(
      await rpc(dead, deadDapp, "pm_getPaymasterData", [op, ENTRY_POINT_V07_ADDRESS, chainIdHex, { token: TOKEN }]),
    );
    assert.equal((data.paymaster as string).toLowerCase(), tokenPaymaster("0.7").toLowerCase());
  } finally {
    await dead.close();
  }
});
