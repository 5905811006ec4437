// ERC20 mode on EntryPoint v0.7 and v0.8, end to end: the service's local chain (its TokenPaymasterV07 per later
// version, funded, staked, signed for by the service's key), Alto bundling, and viem's createBundlerClient with
// createPaymasterClient and Pimlico's ERC-7677 context `{ token }`. A new permissionless SimpleAccount holding only the
// local test token (TUSD, no ether) sends a batch of approve(tokenPaymaster, amount) and a call; the operation is mined
// with UserOperationEvent.success, our token paymaster paying, and the sender's TUSD down by exactly TokenCharged's
// amount, at most the maximum the service signed for. An unknown token reaches the caller as our -32602 reason. On v0.7
// also pimlico's pm_sponsorUserOperation with { token }, after a quote from pm_getFeeQuoteOrData's v0.7 form, both
// with the gas estimated by Alto over the token paymaster's stub; on v0.6 the same ERC-7677 flow through v0.6's token
// paymaster; and a sender holding none of the token refused by the service with what it holds and the maximum.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { toSimpleSmartAccount } from "permissionless/accounts";
import { createPimlicoClient } from "permissionless/clients/pimlico";
import {
  type Address,
  encodeFunctionData,
  erc20Abi,
  type Hex,
  http,
  isAddressEqual,
  parseEventLogs,
  parseUnits,
  toHex,
} from "viem";
import type { SmartAccount, UserOperationReceipt } from "viem/account-abstraction";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { ENTRY_POINT_V06_ADDRESS } from "../../src/bindings/entryPoints/entryPoint";
import { entryPointV07Abi } from "../../src/bindings/entryPoints/entryPointV07";
import { tokenPaymasterArtifact, tokenPaymasterV07Artifact } from "../../src/bindings/paymasters/tokenArtifacts";
import type { LaterEntryPointVersion } from "../../src/config";
import {
  LOCAL_TEST_TOKEN_ADDRESS,
  LOCAL_TOKEN_PAYMASTER_ADDRESS,
  mintTestTokens,
} from "../../src/devChain/tokenDeployment";
import { listSponsorships } from "../../src/storage/sponsorships";
import { anvilKeys } from "../contracts/fixtures";
import { confirm } from "../contracts/v07/localStacks";
import { bundlerFor } from "../helpers/altoStack";
import { altoStackFile } from "../helpers/altoStackFile";
import { TARGET } from "../helpers/chainApp";
import { paymasterRefusal } from "../helpers/paymasterRefusal";
import { pimlicoBundlerFor } from "../helpers/pimlicoBundler";
import { postJsonRpc } from "../helpers/postJsonRpc";

/** What each new account is given: 100 TUSD (6 decimals) and no ether. */
const MINTED = 100_000_000n;
/** What the batch approves the token paymaster for: 20 TUSD, well above any charge here. */
const APPROVED = 20_000_000n;
const UNKNOWN_TOKEN: Address = "0x00000000000000000000000000000000000000aa";

// ERC20 mode needs no funding wallet, policy or whitelist: a bare dApp's apiKey is enough.
const { started, dapp, endpoint } = altoStackFile({ entryPoints: ["0.6", "0.7", "0.8"], feeTokens: true }, (t) =>
  t.dapp(),
);

function tokenPaymasterOf(version: LaterEntryPointVersion): Address {
  const paymaster = started().env.chain.info.entryPoints[version].tokenPaymaster;
  assert.ok(paymaster, `the local chain has a token paymaster for v${version}`);
  return paymaster;
}

/** A new SimpleAccount of the version (not deployed yet) holding MINTED TUSD and no ether. */
async function fundedAccount(version: LaterEntryPointVersion): Promise<SmartAccount> {
  const { env } = started();
  const account = await toSimpleSmartAccount({
    client: env.publicClient,
    owner: privateKeyToAccount(generatePrivateKey()),
    entryPoint: { address: env.chain.info.entryPoints[version].entryPoint, version },
  });
  const owner = env.wallet(anvilKeys.owner);
  await confirm(env, mintTestTokens({ publicClient: env.publicClient, walletClient: owner }, account.address, MINTED));
  return account;
}

const balanceOf = (address: Address) =>
  started().env.publicClient.readContract({
    address: LOCAL_TEST_TOKEN_ADDRESS,
    abi: erc20Abi,
    functionName: "balanceOf",
    args: [address],
  });

/** approve(tokenPaymaster, APPROVED) on the fee token, then the call the user wants. */
function batch(version: LaterEntryPointVersion) {
  return [
    {
      to: LOCAL_TEST_TOKEN_ADDRESS,
      value: 0n,
      data: encodeFunctionData({
        abi: erc20Abi,
        functionName: "approve",
        args: [tokenPaymasterOf(version), APPROVED],
      }),
    },
    { to: TARGET, value: 0n },
  ];
}

for (const version of ["0.7", "0.8"] as const) {
  describe(`EntryPoint v${version}, ERC20 mode through ERC-7677 with { token }`, () => {
    test("a SimpleAccount holding only TUSD pays its operation in TUSD, mined by Alto", async (tc) => {
      const { env, t } = started();
      const account = await fundedAccount(version);
      const bundler = bundlerFor(started(), endpoint(), account);
      const hash = await bundler.sendUserOperation({
        calls: batch(version),
        paymasterContext: { token: LOCAL_TEST_TOKEN_ADDRESS },
      });
      const receipt = await bundler.waitForUserOperationReceipt({ hash, timeout: 30_000 });
      assert.equal(receipt.success, true, "UserOperationEvent.success");
      assert.ok(receipt.paymaster && isAddressEqual(receipt.paymaster, tokenPaymasterOf(version)), "our paymaster");
      const logs = receipt.receipt.logs;
      const [event] = parseEventLogs({ abi: entryPointV07Abi, logs, eventName: "UserOperationEvent" }).filter((e) =>
        isAddressEqual(e.args.sender, account.address),
      );
      assert.ok(event, "a UserOperationEvent for the sender");
      assert.ok(isAddressEqual(event.address, env.chain.info.entryPoints[version].entryPoint));
      assert.equal(event.args.success, true);
      assert.equal(event.args.userOpHash, hash);
      const [charged] = parseEventLogs({ abi: tokenPaymasterV07Artifact.abi, logs, eventName: "TokenCharged" }).filter(
        (c) => c.args.userOpHash === hash,
      );
      assert.ok(charged, "the token paymaster charged the operation");
      assert.ok(isAddressEqual(charged.args.sender, account.address));
      assert.ok(isAddressEqual(charged.args.feeToken, LOCAL_TEST_TOKEN_ADDRESS));
      assert.ok(charged.args.amount > 0n, "a charge in TUSD");
      assert.equal(MINTED - (await balanceOf(account.address)), charged.args.amount, "TUSD down by the charge");
      assert.equal(await env.publicClient.getBalance({ address: account.address }), 0n, "no ether was needed");
      // The record the service made when it signed: under the EntryPoint's userOpHash, with the maximum it allowed.
      const [record, ...others] = (await listSponsorships(t.db, dapp().paymasterId)).filter(
        (r) => r.user_op_hash?.toLowerCase() === hash.toLowerCase(),
      );
      assert.ok(record && others.length === 0, "one record with the EntryPoint's userOpHash");
      const [outcome] = (record.rule_outcomes ?? []) as unknown as { rule: string; maxTokenCost: string }[];
      assert.equal(outcome?.rule, "ERC20");
      assert.ok(charged.args.amount <= BigInt(outcome?.maxTokenCost ?? 0), "charged at most the signed maximum");
      tc.diagnostic(`charged ${charged.args.amount} TUSD units of at most ${outcome?.maxTokenCost}`);
    });

    test("an unknown token reaches the caller as the paymaster's -32602 with our reason", async () => {
      const account = await fundedAccount(version);
      await paymasterRefusal(
        bundlerFor(started(), endpoint(), account).sendUserOperation({
          calls: batch(version),
          paymasterContext: { token: UNKNOWN_TOKEN },
        }),
        endpoint(),
        -32602,
        `Fee token ${UNKNOWN_TOKEN} is not supported (chain 31337 accepts`,
      );
      assert.equal(await balanceOf(account.address), MINTED, "nothing was charged");
    });
  });
}

/** The charge of a mined operation: TokenCharged's amount, and the sender's TUSD down by exactly that. */
async function checkCharged(account: SmartAccount, hash: Hex, receipt: UserOperationReceipt) {
  assert.equal(receipt.success, true, "UserOperationEvent.success");
  const [charged] = parseEventLogs({
    abi: tokenPaymasterV07Artifact.abi,
    logs: receipt.receipt.logs,
    eventName: "TokenCharged",
  }).filter((c) => c.args.userOpHash === hash);
  assert.ok(charged, "the token paymaster charged the operation");
  assert.equal(MINTED - (await balanceOf(account.address)), charged.args.amount, "TUSD down by the charge");
  return charged.args.amount;
}

describe("EntryPoint v0.7, a quote and pimlico's pm_sponsorUserOperation with { token }", () => {
  test("the quote's maximum covers the charge of the operation then sponsored and mined", async (tc) => {
    const { env, alto } = started();
    const version = "0.7";
    const entryPoint = { address: env.chain.info.entryPoints[version].entryPoint, version } as const;
    const account = await fundedAccount(version);
    const calls = batch(version);
    // The quote: the operation as a wallet has it before any gas is known; the service has Alto estimate it.
    // The bundler's own price (Alto refuses less), so that the operation can be sent at the fees quoted.
    const { fast: fees } = await createPimlicoClient({
      transport: http(alto.url),
      entryPoint,
    }).getUserOperationGasPrice();
    const factory = await account.getFactoryArgs();
    const operation = {
      sender: account.address,
      nonce: toHex(await account.getNonce()),
      factory: factory.factory,
      factoryData: factory.factoryData,
      callData: await account.encodeCalls(calls),
      maxFeePerGas: toHex(fees.maxFeePerGas),
      maxPriorityFeePerGas: toHex(fees.maxPriorityFeePerGas),
      signature: await account.getStubSignature(),
    };
    const { body: reply } = await postJsonRpc<{
      paymasterAddress: string;
      feeQuotes: { tokenAddress: string; maxGasFee: number }[];
    }>(endpoint(), "pm_getFeeQuoteOrData", [operation, entryPoint.address, { tokenList: [LOCAL_TEST_TOKEN_ADDRESS] }]);
    assert.ok(reply.result, JSON.stringify(reply.error));
    assert.ok(isAddressEqual(reply.result.paymasterAddress as Address, tokenPaymasterOf(version)));
    const [quote] = reply.result.feeQuotes;
    assert.ok(quote && quote.maxGasFee > 0, JSON.stringify(reply.result));
    const quotedMaximum = parseUnits(String(quote.maxGasFee), 6);

    const { bundler, answers } = pimlicoBundlerFor(started(), endpoint(), account, entryPoint, {
      token: LOCAL_TEST_TOKEN_ADDRESS,
    });
    // At the fees quoted: the charge is at the fee paid, so a dearer fee than the quote's could exceed its maximum.
    const hash = await bundler.sendUserOperation({
      calls,
      maxFeePerGas: fees.maxFeePerGas,
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
    });
    const receipt = await bundler.waitForUserOperationReceipt({ hash, timeout: 30_000 });
    const answer = answers.at(-1);
    assert.ok(answer, "pm_sponsorUserOperation answered");
    assert.ok(isAddressEqual(answer.paymaster as Address, tokenPaymasterOf(version)), "the token paymaster's fields");
    for (const field of ["callGasLimit", "verificationGasLimit", "preVerificationGas"]) {
      assert.equal(typeof answer[field], "bigint", `${field} came back, estimated by the bundler`);
    }
    assert.ok(receipt.paymaster && isAddressEqual(receipt.paymaster, tokenPaymasterOf(version)));
    const amount = await checkCharged(account, hash, receipt);
    assert.ok(amount <= quotedMaximum, `charged ${amount}, quoted at most ${quotedMaximum}`);
    tc.diagnostic(`quoted at most ${quotedMaximum}, charged ${amount}`);
  });
});

describe("EntryPoint v0.6, ERC20 mode through ERC-7677 with { token }", () => {
  test("a SimpleAccount 0.6 holding only TUSD pays through v0.6's token paymaster, mined by Alto", async (tc) => {
    const { env } = started();
    const account = await toSimpleSmartAccount({
      client: env.publicClient,
      owner: privateKeyToAccount(generatePrivateKey()),
      entryPoint: { address: ENTRY_POINT_V06_ADDRESS, version: "0.6" },
    });
    const owner = env.wallet(anvilKeys.owner);
    await confirm(
      env,
      mintTestTokens({ publicClient: env.publicClient, walletClient: owner }, account.address, MINTED),
    );
    const calls = [
      {
        to: LOCAL_TEST_TOKEN_ADDRESS,
        value: 0n,
        data: encodeFunctionData({
          abi: erc20Abi,
          functionName: "approve",
          args: [LOCAL_TOKEN_PAYMASTER_ADDRESS, APPROVED],
        }),
      },
      { to: TARGET, value: 0n },
    ];
    const bundler = bundlerFor(started(), endpoint(), account);
    const hash = await bundler.sendUserOperation({ calls, paymasterContext: { token: LOCAL_TEST_TOKEN_ADDRESS } });
    const receipt = await bundler.waitForUserOperationReceipt({ hash, timeout: 30_000 });
    assert.equal(receipt.success, true, "UserOperationEvent.success");
    assert.ok(receipt.paymaster && isAddressEqual(receipt.paymaster, LOCAL_TOKEN_PAYMASTER_ADDRESS), "our paymaster");
    const [charged] = parseEventLogs({
      abi: tokenPaymasterArtifact.abi,
      logs: receipt.receipt.logs,
      eventName: "TokenCharged",
    }).filter((c) => isAddressEqual(c.args.sender, account.address));
    assert.ok(charged, "the v0.6 token paymaster charged the operation");
    assert.equal(MINTED - (await balanceOf(account.address)), charged.args.amount, "TUSD down by the charge");
    tc.diagnostic(`charged ${charged.args.amount} TUSD units`);
  });
});

describe("EntryPoint v0.8, a sender without enough of the token", () => {
  test("pm_getPaymasterStubData and pm_getPaymasterData are -32602 saying what the sender holds and the most it can be charged", async () => {
    const { env } = started();
    const account = await toSimpleSmartAccount({
      client: env.publicClient,
      owner: privateKeyToAccount(generatePrivateKey()),
      entryPoint: { address: env.chain.info.entryPoints["0.8"].entryPoint, version: "0.8" },
    });
    const factory = await account.getFactoryArgs();
    const operation = {
      sender: account.address,
      nonce: "0x0",
      factory: factory.factory,
      factoryData: factory.factoryData,
      callData: await account.encodeCalls(batch("0.8")),
      callGasLimit: "0x186a0",
      verificationGasLimit: "0x493e0",
      preVerificationGas: "0xc350",
      maxFeePerGas: "0x77359400",
      maxPriorityFeePerGas: "0x3b9aca00",
      signature: await account.getStubSignature(),
    };
    const call = async (method: string) =>
      (
        await postJsonRpc(endpoint(), method, [
          operation,
          account.entryPoint.address,
          "0x7a69",
          { token: LOCAL_TEST_TOKEN_ADDRESS },
        ])
      ).body;
    const reply = await call("pm_getPaymasterData");
    assert.equal(reply.error?.code, -32602, JSON.stringify(reply));
    assert.match(
      reply.error.message,
      new RegExp(
        `^Sender ${account.address} holds 0 TUSD of fee token .*, less than the [0-9.]+ TUSD this operation can be ` +
          "charged at most: the token paymaster would refuse it$",
        "i",
      ),
    );
    // The stub weighs the same balance against the same gas, so the wallet learns it before its user signs.
    assert.deepEqual(await call("pm_getPaymasterStubData"), reply);
  });
});
