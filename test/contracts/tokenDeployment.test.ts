import assert from "node:assert/strict";
import { test } from "node:test";
import { isAddressEqual, parseEther, size } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { ENTRY_POINT_V06_ADDRESS } from "../../src/bindings/entryPoints/entryPoint";
import {
  fixedPriceAggregatorArtifact,
  testTokenArtifact,
  tokenPaymasterArtifact,
} from "../../src/bindings/paymasters/tokenArtifacts";
import { ANVIL_FIRST_ACCOUNT } from "../../src/devChain/deployments";
import {
  addTokenPaymasterSigner,
  deployLocalTokenStack,
  LOCAL_PRICE,
  LOCAL_PRICE_AGGREGATOR_ADDRESS,
  LOCAL_TEST_TOKEN,
  LOCAL_TEST_TOKEN_ADDRESS,
  LOCAL_TOKEN_PAYMASTER_ADDRESS,
  LOCAL_TOKEN_PAYMASTER_DEPOSIT,
  mintTestTokens,
  refreshLocalPrice,
} from "../../src/devChain/tokenDeployment";
import { anvilKeys, startLocalChain } from "./fixtures";

test("deploys the ERC20-mode stack at its deterministic addresses, funded and priced, then skips it", async (t) => {
  const env = await startLocalChain();
  t.after(() => env.anvil.stop());
  const owner = env.clients(anvilKeys.owner);

  const first = await deployLocalTokenStack(owner);
  assert.deepEqual(
    [first.entryPoint, first.tokenPaymaster, first.testToken, first.priceAggregator].map((step) => [
      step.address,
      step.deployed,
    ]),
    [
      [ENTRY_POINT_V06_ADDRESS, true],
      [LOCAL_TOKEN_PAYMASTER_ADDRESS, true],
      [LOCAL_TEST_TOKEN_ADDRESS, true],
      [LOCAL_PRICE_AGGREGATOR_ADDRESS, true],
    ],
  );
  assert.equal(first.depositAdded, LOCAL_TOKEN_PAYMASTER_DEPOSIT);
  assert.equal(first.priceRefreshed, false);
  t.diagnostic(
    `token paymaster ${LOCAL_TOKEN_PAYMASTER_ADDRESS}, test token ${LOCAL_TEST_TOKEN_ADDRESS}, ` +
      `aggregator ${LOCAL_PRICE_AGGREGATOR_ADDRESS}`,
  );

  const paymaster = { address: LOCAL_TOKEN_PAYMASTER_ADDRESS, abi: tokenPaymasterArtifact.abi } as const;
  const read = env.publicClient.readContract;
  assert.ok(isAddressEqual(await read({ ...paymaster, functionName: "owner" }), ANVIL_FIRST_ACCOUNT));
  assert.equal(await read({ ...paymaster, functionName: "signerCount" }), 0n, "deployed with no signer");
  assert.ok(isAddressEqual(await read({ ...paymaster, functionName: "entryPoint" }), ENTRY_POINT_V06_ADDRESS));
  assert.equal(await read({ ...paymaster, functionName: "getDeposit" }), LOCAL_TOKEN_PAYMASTER_DEPOSIT);
  assert.equal(await read({ ...paymaster, functionName: "allowanceRequired" }), true);
  assert.equal(await read({ ...paymaster, functionName: "maxPriceAge" }), 86_400);
  const token = { address: LOCAL_TEST_TOKEN_ADDRESS, abi: testTokenArtifact.abi } as const;
  assert.deepEqual(
    [
      await read({ ...token, functionName: "name" }),
      await read({ ...token, functionName: "symbol" }),
      await read({ ...token, functionName: "decimals" }),
    ],
    [LOCAL_TEST_TOKEN.name, LOCAL_TEST_TOKEN.symbol, LOCAL_TEST_TOKEN.decimals],
  );
  const feed = { address: LOCAL_PRICE_AGGREGATOR_ADDRESS, abi: fixedPriceAggregatorArtifact.abi } as const;
  const [, answer, , updatedAt] = await read({ ...feed, functionName: "latestRoundData" });
  assert.equal(answer, LOCAL_PRICE.answer);
  assert.equal(await read({ ...feed, functionName: "decimals" }), LOCAL_PRICE.decimals);
  assert.ok(isAddressEqual(await read({ ...feed, functionName: "owner" }), ANVIL_FIRST_ACCOUNT));
  for (const address of [LOCAL_TOKEN_PAYMASTER_ADDRESS, LOCAL_TEST_TOKEN_ADDRESS, LOCAL_PRICE_AGGREGATOR_ADDRESS]) {
    assert.ok(size((await env.publicClient.getCode({ address })) ?? "0x") > 0);
  }

  // A second run sends nothing.
  const second = await deployLocalTokenStack(owner);
  assert.deepEqual(
    [second.tokenPaymaster, second.testToken, second.priceAggregator].map((step) => step.deployed),
    [false, false, false],
  );
  assert.equal(second.depositAdded, 0n);
  assert.equal(second.priceRefreshed, false);

  // Past half the paymaster's maxPriceAge the local price is re-dated (same answer), and the deposit topped up again.
  await env.testClient.increaseTime({ seconds: 43_201 });
  await env.testClient.mine({ blocks: 1 });
  const spent = parseEther("1");
  const withdrawal = await env.wallet(anvilKeys.owner).writeContract({
    ...paymaster,
    functionName: "withdrawTo",
    args: [ANVIL_FIRST_ACCOUNT, spent],
  });
  await env.publicClient.waitForTransactionReceipt({ hash: withdrawal });
  const third = await deployLocalTokenStack(owner);
  assert.equal(third.priceRefreshed, true);
  assert.equal(third.depositAdded, spent);
  const [, refreshedAnswer, , refreshedAt] = await read({ ...feed, functionName: "latestRoundData" });
  assert.equal(refreshedAnswer, LOCAL_PRICE.answer);
  assert.ok(refreshedAt > updatedAt + 43_200n);
  assert.deepEqual(await refreshLocalPrice(owner), { refreshed: false });

  // Anyone mints local test tokens; only the owner adds a signer, and adding one already in the set sends nothing.
  const holder = privateKeyToAccount(generatePrivateKey()).address;
  await mintTestTokens(env.clients(anvilKeys.stranger), holder, 5n);
  assert.equal(await read({ ...token, functionName: "balanceOf", args: [holder] }), 5n);
  const serviceKey = privateKeyToAccount(generatePrivateKey()).address;
  await assert.rejects(
    addTokenPaymasterSigner(env.clients(anvilKeys.stranger), serviceKey),
    /only the paymaster's owner/,
  );
  assert.equal((await addTokenPaymasterSigner(owner, serviceKey)).changed, true);
  assert.equal(await read({ ...paymaster, functionName: "isSigner", args: [serviceKey] }), true);
  assert.deepEqual(await addTokenPaymasterSigner(owner, serviceKey), { changed: false });
});
