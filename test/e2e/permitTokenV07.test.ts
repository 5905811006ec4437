// ERC20 mode charged up front (PermitTokenPaymasterV07), end to end: the service's local chain, Alto bundling, viem's
// bundler client with viem's ERC-7677 paymaster client, and the USDC-like local token TUSDC (EIP-2612 permit with a
// bytes signature, ERC-1271). A wallet asks the stub with `{ token }`, gets `permitTypedData`, has its account sign it,
// and sends `{ token, permit }` as the context: its first operation is paid in TUSDC with no approve anywhere in its
// calls. A Kernel 0.3.1 on v0.7 signs its permit with ERC-1271 (through an ERC-6492 wrapper, not deployed yet); a
// fresh EIP-7702 account on v0.8 has its owner sign. The sender's TUSDC falls by exactly TokenCharged's charge, within
// the maximum the service signed for; an operation whose call sends every token it holds away is still mined and
// charged; a permit a third party submits first still lets its operation through; and a permit that cannot work is
// refused with -32602 naming its field, nothing signed.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { toKernelSmartAccount } from "permissionless/accounts";
import { createPimlicoClient } from "permissionless/clients/pimlico";
import {
  type Address,
  encodeFunctionData,
  erc20Abi,
  type Hex,
  http,
  isAddressEqual,
  maxUint256,
  parseEventLogs,
  type SignedAuthorization,
  type TypedDataDomain,
} from "viem";
import {
  createBundlerClient,
  formatUserOperationRequest,
  type SmartAccount,
  toSimple7702SmartAccount,
  type UserOperation,
  type UserOperationReceipt,
} from "viem/account-abstraction";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { PAYMASTER_SIGNATURE_PLACEHOLDER } from "../../src/bindings/entryPoints/entryPointV09";
import {
  PERMIT_TOKEN_PAYMASTER_POST_OP_GAS_LIMIT,
  PERMIT_TOKEN_PAYMASTER_VERIFICATION_GAS_LIMIT,
} from "../../src/bindings/paymasters/permitTokenPaymasterAndData";
import { permitTokenPaymasterV07Artifact } from "../../src/bindings/paymasters/tokenArtifacts";
import { LOCAL_ENTRY_POINT_STACKS } from "../../src/chain/localAddresses";
import { DEFAULT_TOKEN_MARKUP, type LaterEntryPointVersion } from "../../src/config";
import {
  LOCAL_PERMIT_TOKEN_ADDRESS,
  LOCAL_PRICE_AGGREGATOR_ADDRESS,
  mintTestTokens,
} from "../../src/devChain/tokenDeployment";
import { startSettlement } from "../../src/settlement/watcher";
import { listSponsorships } from "../../src/storage/sponsorships";
import { anvilKeys } from "../contracts/fixtures";
import { confirm } from "../contracts/v07/localStacks";
import { bundlerFor } from "../helpers/altoStack";
import { altoStackFile } from "../helpers/altoStackFile";
import { TARGET } from "../helpers/chainApp";
import { eip7702AccountV08 } from "../helpers/eip7702AccountV08";
import { paymasterHookGas } from "../helpers/paymasterHookGas";
import { paymasterRefusal } from "../helpers/paymasterRefusal";
import { pimlicoBundlerFor } from "../helpers/pimlicoBundler";
import { postJsonRpc } from "../helpers/postJsonRpc";
import { withPaymasterFields } from "../helpers/userOps";

/** What each new account is given: 100 TUSDC (6 decimals) and no ether. */
const MINTED = 100_000_000n;
const TOKEN = LOCAL_PERMIT_TOKEN_ADDRESS;

const { started, dapp, endpoint } = altoStackFile({ entryPoints: ["0.7", "0.8", "0.9"], feeTokens: true }, (t) =>
  t.dapp(),
);

/**
 * The account's gas, where a test gives it as a wallet may: so that the prefund is known before the operation is sent
 * (the dodge test spends all but it), and so that a second operation's maximum charge fits the allowance the first
 * permit left. Enough for a Kernel's deployment and ERC-1271 check, or a 7702 account's first operation, and a token
 * transfer. The first Kernel operation and pm_sponsorUserOperation leave the gas to Alto's estimate.
 */
const GAS = { verificationGasLimit: 400_000n, callGasLimit: 100_000n, preVerificationGas: 100_000n };

const upFrontPaymaster = (version: LaterEntryPointVersion): Address =>
  LOCAL_ENTRY_POINT_STACKS[version].permitTokenPaymaster;

const permitAbi = [
  {
    type: "function",
    name: "permit",
    stateMutability: "nonpayable",
    inputs: [
      { name: "owner", type: "address" },
      { name: "spender", type: "address" },
      { name: "value", type: "uint256" },
      { name: "deadline", type: "uint256" },
      { name: "signature", type: "bytes" },
    ],
    outputs: [],
  },
] as const;

const balanceOf = (address: Address) =>
  started().env.publicClient.readContract({
    address: TOKEN,
    abi: erc20Abi,
    functionName: "balanceOf",
    args: [address],
  });

async function mint(to: Address) {
  const { env } = started();
  const owner = env.wallet(anvilKeys.owner);
  await confirm(env, mintTestTokens({ publicClient: env.publicClient, walletClient: owner }, to, MINTED, TOKEN));
}

/** A new Kernel 0.3.1 on v0.7 (ERC-1271), not deployed, holding MINTED TUSDC and no ether. */
async function kernelAccount(): Promise<SmartAccount> {
  const { env } = started();
  const account = await toKernelSmartAccount({
    client: env.publicClient,
    owners: [privateKeyToAccount(generatePrivateKey())],
    version: "0.3.1",
    entryPoint: { address: env.chain.info.entryPoints["0.7"].entryPoint, version: "0.7" },
  });
  await mint(account.address);
  return account;
}

interface OfferedPermit {
  domain: TypedDataDomain;
  types: { Permit: { name: string; type: string }[] };
  primaryType: "Permit";
  message: { owner: Address; spender: Address; value: string; nonce: string; deadline: string };
}

/** The stub for `{ token }`, as a wallet asks it before anything else: its permitTypedData. */
async function offeredPermit(
  account: SmartAccount,
  calls: { to: Address; value: bigint; data?: Hex }[],
  authorization?: SignedAuthorization,
) {
  const bundler = bundlerFor(started(), endpoint(), account);
  const op = await bundler.prepareUserOperation({
    calls,
    parameters: ["factory", "fees", "nonce", ...(authorization ? (["authorization"] as const) : [])],
    ...(authorization ? { authorization } : {}),
  });
  // viem's getPaymasterStubData keeps only the fields it knows: the request as a wallet that reads ours sends it.
  const { body } = await postJsonRpc<{ permitTypedData?: OfferedPermit }>(endpoint(), "pm_getPaymasterStubData", [
    formatUserOperationRequest(op as unknown as UserOperation),
    account.entryPoint.address,
    "0x7a69",
    { token: TOKEN },
  ]);
  const stub = body.result ?? assert.fail(JSON.stringify(body.error));
  assert.ok(stub.permitTypedData, "the stub offers a Permit to sign");
  return stub.permitTypedData;
}

/** The offered Permit with its uint256 fields as numbers, as signTypedData takes them. */
function typed(offer: OfferedPermit, change: Partial<{ spender: Address; value: bigint; nonce: bigint }> = {}) {
  return {
    domain: offer.domain,
    types: offer.types,
    primaryType: "Permit" as const,
    message: {
      owner: offer.message.owner,
      spender: change.spender ?? offer.message.spender,
      value: change.value ?? BigInt(offer.message.value),
      nonce: change.nonce ?? BigInt(offer.message.nonce),
      deadline: BigInt(offer.message.deadline),
    },
  };
}

const contextWith = (value: bigint, signature: Hex) => ({
  token: TOKEN,
  permit: { value: `0x${value.toString(16)}`, deadline: `0x${maxUint256.toString(16)}`, signature },
});

/** The mined operation's TokenCharged; the sender's TUSDC down by exactly its charge, within the signed maximum. */
async function checkCharged(
  account: SmartAccount,
  hash: Hex,
  receipt: UserOperationReceipt,
  version: LaterEntryPointVersion,
  before: bigint,
) {
  assert.equal(receipt.success, true, "UserOperationEvent.success");
  assert.ok(
    receipt.paymaster && isAddressEqual(receipt.paymaster, upFrontPaymaster(version)),
    "the up-front paymaster",
  );
  const [charged] = parseEventLogs({
    abi: permitTokenPaymasterV07Artifact.abi,
    logs: receipt.receipt.logs,
    eventName: "TokenCharged",
  }).filter((c) => c.args.userOpHash === hash);
  assert.ok(charged, "the up-front token paymaster charged the operation");
  assert.ok(charged.args.charge > 0n && charged.args.refund > 0n, "a charge and a refund");
  assert.equal(before - (await balanceOf(account.address)), charged.args.charge, "TUSDC down by exactly the charge");
  const [record] = (await listSponsorships(started().t.db, dapp().paymasterId)).filter(
    (r) => r.user_op_hash?.toLowerCase() === hash.toLowerCase(),
  );
  const [outcome] = (record?.rule_outcomes ?? []) as unknown as { rule: string; maxTokenCost: string }[];
  assert.equal(outcome?.rule, "ERC20");
  assert.ok(charged.args.charge <= BigInt(outcome.maxTokenCost), "within the maximum signed for");
  // Settlement records the charge and the refund, and the ledger shows them in the token's units.
  const settlement = startSettlement(started().t.ctx, { poll: false });
  try {
    await settlement.settleOnce();
  } finally {
    await settlement.stop();
  }
  const ledger = await started().t.call("GET", "sponsorships", { token: dapp().token, apiKey: dapp().apiKey });
  const row = (ledger.body.data as { userOpHash: string | null; token?: Record<string, unknown> }[]).find(
    (r) => r.userOpHash?.toLowerCase() === hash.toLowerCase(),
  );
  assert.deepEqual(row?.token, {
    feeToken: TOKEN.toLowerCase(),
    symbol: "TUSDC",
    decimals: 6,
    maxCharge: outcome.maxTokenCost,
    charge: charged.args.charge.toString(),
    refund: charged.args.refund.toString(),
  });
  return charged.args;
}

describe("ERC20 mode charged up front, with a permit, through Alto", () => {
  test("a fresh Kernel on v0.7 pays its first operation in TUSDC with an ERC-1271 permit, no approve", async (tc) => {
    const { env } = started();
    const account = await kernelAccount();
    const calls = [{ to: TARGET, value: 0n }];
    const offer = await offeredPermit(account, calls);
    assert.ok(isAddressEqual(offer.message.spender, upFrontPaymaster("0.7")), "spender: the up-front paymaster");
    assert.ok(isAddressEqual(offer.message.owner, account.address), "owner: the sender");
    assert.equal(offer.message.deadline, maxUint256.toString());
    assert.equal(offer.domain.name, "Test USD Coin", "the domain the token publishes");
    const signature = await account.signTypedData(typed(offer));
    const bundler = bundlerFor(started(), endpoint(), account);
    // The gas as Alto estimates it: postOp costs the same at its 1 wei per gas, where nothing is refunded.
    const hash = await bundler.sendUserOperation({
      calls,
      paymasterContext: contextWith(BigInt(offer.message.value), signature),
    });
    const receipt = await bundler.waitForUserOperationReceipt({ hash, timeout: 30_000 });
    const charged = await checkCharged(account, hash, receipt, "0.7", MINTED);
    const first = await paymasterHookGas(env.publicClient, receipt.receipt.transactionHash, upFrontPaymaster("0.7"));
    // The permit left an allowance above the next maximum charge at the wallet's own gas (the stub, asked before any
    // estimate, prices the allowance at a deployment's figures): the next operation is up front with no permit.
    const before = await balanceOf(account.address);
    const nextHash = await bundler.sendUserOperation({ calls, ...GAS, paymasterContext: { token: TOKEN } });
    const next = await bundler.waitForUserOperationReceipt({ hash: nextHash, timeout: 30_000 });
    const again = await checkCharged(account, nextHash, next, "0.7", before);
    const second = await paymasterHookGas(env.publicClient, next.receipt.transactionHash, upFrontPaymaster("0.7"));
    const share = (c: { charge: bigint; refund: bigint }) => Number((c.refund * 1000n) / (c.charge + c.refund)) / 10;
    tc.diagnostic(
      `with a permit (ERC-1271, first charge): validatePaymasterUserOp ${first.validation} gas, postOp ${first.postOp}; ` +
        `charge ${charged.charge}, refund ${charged.refund} (${share(charged)} % of the prefund)`,
    );
    tc.diagnostic(
      `without (allowance left): validatePaymasterUserOp ${second.validation} gas, postOp ${second.postOp}; ` +
        `charge ${again.charge}, refund ${again.refund} (${share(again)} % of the prefund)`,
    );
    tc.diagnostic(
      `charge ${charged.charge}, refund ${charged.refund} (${(Number(charged.refund) * 100) / Number(charged.charge + charged.refund)} % of the prefund)`,
    );
  });

  test("pimlico's pm_sponsorUserOperation with a permit: the service has Alto estimate the gas, and the operation is mined", async () => {
    const account = await kernelAccount();
    const calls = [{ to: TARGET, value: 0n }];
    const offer = await offeredPermit(account, calls);
    const signature = await account.signTypedData(typed(offer));
    const entryPoint = { address: account.entryPoint.address, version: "0.7" } as const;
    const context = contextWith(BigInt(offer.message.value), signature);
    const { bundler, answers } = pimlicoBundlerFor(started(), endpoint(), account, entryPoint, context);
    const hash = await bundler.sendUserOperation({ calls });
    const receipt = await bundler.waitForUserOperationReceipt({ hash, timeout: 30_000 });
    const answer = answers.at(-1) ?? assert.fail("pm_sponsorUserOperation answered");
    assert.ok(isAddressEqual(answer.paymaster as Address, upFrontPaymaster("0.7")), "the up-front paymaster's fields");
    for (const field of ["callGasLimit", "verificationGasLimit", "preVerificationGas"]) {
      assert.equal(typeof answer[field], "bigint", `${field} came back, estimated by the bundler`);
    }
    await checkCharged(account, hash, receipt, "0.7", MINTED);
  });

  test("a fresh EIP-7702 account on v0.8 pays with its owner's permit, its call sending every token it holds away", async (tc) => {
    const { env, alto } = started();
    const { owner, account, authorization } = await eip7702AccountV08(env);
    await mint(account.address);
    const offer = await offeredPermit(account, [{ to: TARGET, value: 0n }], authorization);
    const value = BigInt(offer.message.value);
    // The fees fixed first, so that the prefund validation takes is known: the call then sends away exactly what the
    // account holds once it is taken, as an owner dodging the charge would.
    const { fast: fees } = await createPimlicoClient({
      transport: http(alto.url),
      entryPoint: { address: account.entryPoint.address, version: "0.8" },
    }).getUserOperationGasPrice();
    const limits = PERMIT_TOKEN_PAYMASTER_VERIFICATION_GAS_LIMIT + PERMIT_TOKEN_PAYMASTER_POST_OP_GAS_LIMIT;
    const maxCost = (GAS.verificationGasLimit + GAS.callGasLimit + GAS.preVerificationGas + limits) * fees.maxFeePerGas;
    const paymaster = { address: upFrontPaymaster("0.8"), abi: permitTokenPaymasterV07Artifact.abi } as const;
    const [rate] = await env.publicClient.readContract({
      ...paymaster,
      functionName: "oracleRate",
      args: [TOKEN, LOCAL_PRICE_AGGREGATOR_ADDRESS],
    });
    const prefund = await env.publicClient.readContract({
      ...paymaster,
      functionName: "tokenAmount",
      args: [maxCost, rate, DEFAULT_TOKEN_MARKUP],
    });
    const away = encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [TARGET, MINTED - prefund] });
    const signature = await owner.signTypedData(typed(offer));
    const bundler = bundlerFor(started(), endpoint(), account);
    const hash = await bundler.sendUserOperation({
      calls: [{ to: TOKEN, value: 0n, data: away }],
      ...GAS,
      ...fees,
      authorization,
      paymasterContext: contextWith(value, signature),
    });
    const receipt = await bundler.waitForUserOperationReceipt({ hash, timeout: 30_000 });
    const charged = await checkCharged(account, hash, receipt, "0.8", MINTED - (MINTED - prefund));
    assert.equal(charged.charge + charged.refund, prefund, "the prefund, taken before the call, charged and refunded");
    assert.equal(await balanceOf(account.address), charged.refund, "the account holds nothing but the refund");
    assert.equal(await balanceOf(TARGET), MINTED - prefund, "the call sent every token it could");
    const gas = await paymasterHookGas(env.publicClient, receipt.receipt.transactionHash, upFrontPaymaster("0.8"));
    tc.diagnostic(
      `with an EOA owner's permit: validatePaymasterUserOp ${gas.validation} gas, postOp ${gas.postOp}; prefund ` +
        `${prefund}, charge ${charged.charge}, refund ${charged.refund}`,
    );
  });

  test("a permit a third party submits to the token first still lets the operation through", async () => {
    const { env } = started();
    const { owner, account, authorization } = await eip7702AccountV08(env);
    await mint(account.address);
    const calls = [{ to: TARGET, value: 0n }];
    const offer = await offeredPermit(account, calls, authorization);
    const value = BigInt(offer.message.value);
    const signature = await owner.signTypedData(typed(offer));
    const bundler = bundlerFor(started(), endpoint(), account);
    const prepared = await bundler.prepareUserOperation({
      calls,
      ...GAS,
      authorization,
      paymasterContext: contextWith(value, signature),
    });
    // Anyone who saw the permit (in the mempool, in the bundle) may run it first: the nonce is used, the allowance set.
    await confirm(
      env,
      env.wallet(anvilKeys.stranger).writeContract({
        address: TOKEN,
        abi: permitAbi,
        functionName: "permit",
        args: [account.address, upFrontPaymaster("0.8"), value, maxUint256, signature],
      }),
    );
    const unsigned = prepared as unknown as UserOperation<"0.8">;
    const op = { ...unsigned, signature: await account.signUserOperation(unsigned) };
    const hash = await bundler.request({
      method: "eth_sendUserOperation",
      params: [formatUserOperationRequest(op), account.entryPoint.address],
    });
    const receipt = await bundler.waitForUserOperationReceipt({ hash, timeout: 30_000 });
    await checkCharged(account, hash, receipt, "0.8", MINTED);
  });
});

describe("EntryPoint v0.9: ERC20 mode up front, signed in parallel", () => {
  test("commit, the account signs, finalize: a fresh 7702 account's first operation with a permit is mined", async () => {
    const { env, alto } = started();
    const stack = env.chain.info.entryPoints["0.9"];
    const owner = privateKeyToAccount(generatePrivateKey());
    const account = await toSimple7702SmartAccount({ client: env.publicClient, owner, entryPoint: "0.9" });
    const authorization = await owner.signAuthorization({
      address: stack.simple7702Account as Address,
      chainId: env.viemChain.id,
      nonce: 0,
    });
    await mint(account.address);
    const calls = [{ to: TARGET, value: 0n }];
    const offer = await offeredPermit(account, calls, authorization);
    const context = contextWith(BigInt(offer.message.value), await owner.signTypedData(typed(offer)));
    const prepared = await bundlerFor(started(), endpoint(), account).prepareUserOperation({
      calls,
      ...GAS,
      authorization,
      parameters: ["factory", "fees", "nonce", "authorization"],
    });
    const op = prepared as unknown as UserOperation<"0.9">;
    const inPhase = async (sent: UserOperation<"0.9">, signingPhase: "commit" | "finalize") => {
      const { body } = await postJsonRpc<Record<string, Hex>>(endpoint(), "pm_getPaymasterData", [
        formatUserOperationRequest(sent),
        stack.entryPoint,
        "0x7a69",
        { ...context, signingPhase },
      ]);
      return body.result ?? assert.fail(JSON.stringify(body.error));
    };
    const commit = await inPhase({ ...op, signature: "0x" }, "commit");
    assert.ok(isAddressEqual(commit.paymaster as Address, upFrontPaymaster("0.9")), "the up-front paymaster");
    assert.equal(commit.paymasterSignature, PAYMASTER_SIGNATURE_PLACEHOLDER, "signed apart, in parallel");
    const withFields: UserOperation<"0.9"> = withPaymasterFields(op, commit);
    const signature = await account.signUserOperation(withFields);
    const finalize = await inPhase({ ...withFields, signature }, "finalize");
    const final = { ...withFields, signature, paymasterSignature: finalize.paymasterSignature as Hex };
    const bundler = createBundlerClient({ client: env.publicClient, transport: http(alto.url), pollingInterval: 50 });
    const hash = (await bundler.request({
      method: "eth_sendUserOperation",
      params: [formatUserOperationRequest(final), stack.entryPoint],
    })) as Hex;
    const receipt = await bundler.waitForUserOperationReceipt({ hash, timeout: 30_000 });
    await checkCharged(account, hash, receipt, "0.9", MINTED);
  });
});

describe("a permit that cannot work is refused with -32602 naming its field, nothing signed", () => {
  const refusal = async (
    account: SmartAccount,
    change: (offer: OfferedPermit) => Promise<{ value: bigint; signature: Hex }>,
    reason: string,
  ) => {
    const calls = [{ to: TARGET, value: 0n }];
    const offer = await offeredPermit(account, calls);
    const { value, signature } = await change(offer);
    await paymasterRefusal(
      bundlerFor(started(), endpoint(), account).sendUserOperation({
        calls,
        paymasterContext: contextWith(value, signature),
      }),
      endpoint(),
      -32602,
      reason,
    );
    const signed = (await listSponsorships(started().t.db, dapp().paymasterId)).filter(
      (r) => r.sender.toLowerCase() === account.address.toLowerCase() && r.sponsored,
    );
    assert.equal(signed.length, 0, "nothing signed for the sender");
    assert.equal(await balanceOf(account.address), MINTED, "nothing charged");
  };

  test("a permit for another spender (the approve-in-batch token paymaster)", async () => {
    const account = await kernelAccount();
    await refusal(
      account,
      async (offer) => ({
        value: BigInt(offer.message.value),
        signature: await account.signTypedData(
          typed(offer, { spender: LOCAL_ENTRY_POINT_STACKS["0.7"].tokenPaymaster }),
        ),
      }),
      "params[3].permit.signature: does not verify",
    );
  });

  test("a permit whose value is below the maximum charge", async () => {
    const account = await kernelAccount();
    await refusal(
      account,
      async (offer) => ({ value: 1n, signature: await account.signTypedData(typed(offer, { value: 1n })) }),
      "params[3].permit.value: 1 (0.000001 TUSDC) is below the",
    );
  });

  test("a second permit of the sender for the token while the first one's operation is outstanding", async () => {
    const { env } = started();
    const { owner, account, authorization } = await eip7702AccountV08(env);
    await mint(account.address);
    const calls = [{ to: TARGET, value: 0n }];
    const offer = await offeredPermit(account, calls, authorization);
    const context = contextWith(BigInt(offer.message.value), await owner.signTypedData(typed(offer)));
    const bundler = bundlerFor(started(), endpoint(), account);
    // Signed, neither sent nor expired: the token's nonce is still the one its permit uses.
    await bundler.prepareUserOperation({ calls, ...GAS, authorization, paymasterContext: context });
    await paymasterRefusal(
      bundler.prepareUserOperation({ calls, ...GAS, authorization, paymasterContext: context }),
      endpoint(),
      -32602,
      `params[3].permit: sender ${account.address.toLowerCase()} has an operation with a TUSDC permit signed and not yet settled`,
    );
  });

  test("a permit signed at a nonce already used", async () => {
    const { env } = started();
    const { owner, account } = await eip7702AccountV08(env);
    await mint(account.address);
    // The owner's nonce 0 is used by a permit of one base unit, which leaves the allowance short.
    const offer = await offeredPermit(account, [{ to: TARGET, value: 0n }]);
    const small = await owner.signTypedData(typed(offer, { value: 1n }));
    const stranger = env.wallet(anvilKeys.stranger);
    await confirm(
      env,
      stranger.writeContract({
        address: TOKEN,
        abi: permitAbi,
        functionName: "permit",
        args: [account.address, upFrontPaymaster("0.8"), 1n, maxUint256, small],
      }),
    );
    await refusal(
      account,
      async (fresh) => ({
        value: BigInt(fresh.message.value),
        signature: await owner.signTypedData(typed(fresh, { nonce: 0n })),
      }),
      "params[3].permit.signature: does not verify",
    );
  });
});
