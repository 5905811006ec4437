// The network checks (src/chain/paymasterChecks.ts) against the real EntryPoints and our paymasters on anvil: each
// check fails for the reason it names, with a fix, and holds once that fix is applied.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { encodeFunctionData, getAddress } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { ENTRY_POINT_V06_ADDRESS } from "../../src/bindings/entryPoints/entryPoint";
import { verifyingPaymasterV07Artifact } from "../../src/bindings/paymasters/artifacts";
import { LOCAL_ENTRY_POINT_STACKS } from "../../src/chain/localAddresses";
import { type CheckContext, checkChain, checkSite, type NetworkCheck } from "../../src/chain/paymasterChecks";
import { REQUIRED_STAKE_WEI, REQUIRED_UNSTAKE_DELAY_SECONDS } from "../../src/chain/stakeRequirement";
import type { TokenConfig } from "../../src/config";
import { ANVIL_FIRST_ACCOUNT } from "../../src/devChain/deployments";
import { sendTogether } from "../../src/devChain/localBatch";
import { addSignerToPaymasters, deployAllLocalStacks } from "../../src/devChain/localDeployment";
import { tokenPaymasterV07Funding } from "../../src/devChain/localTokenPaymastersV07";
import { LOCAL_TOKENS } from "../../src/devChain/localTokens";
import { deployLocalTokenStack } from "../../src/devChain/tokenDeployment";
import { anvilKeys, type LocalChain, startLocalChain } from "./fixtures";

let env: LocalChain;
const v07 = LOCAL_ENTRY_POINT_STACKS["0.7"];
const v08 = LOCAL_ENTRY_POINT_STACKS["0.8"];
const serviceKey = privateKeyToAccount(anvilKeys.stranger).address;
const context: CheckContext = { signer: serviceKey, tokens: LOCAL_TOKENS };
const site = {
  version: "0.7",
  entryPoint: v07.entryPoint,
  paymasters: { verifying: v07.verifyingPaymaster, token: v07.tokenPaymaster, permitToken: v07.permitTokenPaymaster },
} as const;

before(async () => {
  env = await startLocalChain();
  const owner = env.clients(anvilKeys.owner);
  await deployAllLocalStacks(owner);
  await deployLocalTokenStack(owner); // the test token and its price feed
});
after(() => env?.anvil.stop());

/** "kind check: ok" per line, so a failing assertion shows every check at once. */
function summary(checks: readonly NetworkCheck[]): string[] {
  return checks.map((check) => `${check.kind ?? "-"} ${check.check}: ${check.ok ? "ok" : "FAIL"}`);
}

function failing(checks: readonly NetworkCheck[]): NetworkCheck[] {
  return checks.filter((check) => !check.ok);
}

test("a fresh deployment fails the signer, stake and token deposit checks, each with its fix, then passes once they are done", async () => {
  const fresh = await checkSite(env.publicClient, site, context);
  assert.deepEqual(summary(fresh), [
    "- entryPoint: ok",
    "verifying code: ok",
    "verifying owner: ok",
    "verifying signer: FAIL",
    "verifying stake: FAIL",
    "verifying deposit: ok",
    "token code: ok",
    "token owner: ok",
    "token signer: FAIL",
    "token stake: FAIL",
    "token deposit: FAIL",
    "token feeToken: ok",
    "token feeToken: ok",
    "permitToken code: ok",
    "permitToken owner: ok",
    "permitToken signer: FAIL",
    "permitToken stake: FAIL",
    "permitToken deposit: FAIL",
    "permitToken feeToken: ok",
    "permitToken feeToken: ok",
  ]);
  for (const check of failing(fresh)) assert.ok(check.fix && check.fix.length > 20, `${check.check} says what to do`);
  const signer = fresh.find((check) => check.check === "signer");
  assert.match(signer?.detail ?? "", new RegExp(`${serviceKey} is not in the signer set`));
  assert.match(signer?.fix ?? "", new RegExp(`signers add --signer ${serviceKey}`));
  assert.match(fresh.find((check) => check.check === "stake")?.fix ?? "", /stake --amount 1 --unstake-delay 86400/);

  // The fixes: the key added to all three, the token paymasters funded and staked, the verifying one staked.
  const owner = env.clients(anvilKeys.owner);
  await addSignerToPaymasters(owner, serviceKey, [
    v07.verifyingPaymaster,
    v07.tokenPaymaster,
    v07.permitTokenPaymaster,
  ]);
  await sendTogether(owner, [
    ...(await tokenPaymasterV07Funding(
      owner,
      [v07.tokenPaymaster, v07.permitTokenPaymaster].map((paymaster) => ({ paymaster, entryPoint: v07.entryPoint })),
    )),
    {
      what: "staking the verifying paymaster",
      to: v07.verifyingPaymaster,
      data: encodeFunctionData({
        abi: verifyingPaymasterV07Artifact.abi,
        functionName: "addStake",
        args: [REQUIRED_UNSTAKE_DELAY_SECONDS],
      }),
      value: REQUIRED_STAKE_WEI,
      gas: 150_000n,
    },
  ]);
  const fixed = await checkSite(env.publicClient, site, { ...context, owner: ANVIL_FIRST_ACCOUNT });
  assert.deepEqual(failing(fixed), []);
  assert.equal(fixed.length, fresh.length);
});

test("an address without our code for that EntryPoint fails the code check, and nothing after it is read", async () => {
  const stranger = privateKeyToAccount(anvilKeys.fundingWallet).address;
  const checks = await checkSite(
    env.publicClient,
    // v0.7's paymasters are built for the v0.7 EntryPoint, so under v0.8 they are not ours; an EOA has no code.
    { version: "0.8", entryPoint: v08.entryPoint, paymasters: { verifying: v07.verifyingPaymaster, token: stranger } },
    context,
  );
  assert.deepEqual(summary(checks), ["- entryPoint: ok", "verifying code: FAIL", "token code: FAIL"]);
  assert.match(
    checks[1]?.detail ?? "",
    new RegExp(`not our VerifyingPaymasterV07 built for EntryPoint ${v08.entryPoint}`),
  );
  assert.match(checks[2]?.detail ?? "", /no contract/);
  for (const check of failing(checks)) assert.match(check.fix ?? "", /contracts deploy/);
});

test("a token paymaster's kind of contract at the verifying address is refused: the code must be the kind's", async () => {
  const checks = await checkSite(
    env.publicClient,
    { version: "0.7", entryPoint: v07.entryPoint, paymasters: { verifying: v07.tokenPaymaster } },
    context,
  );
  assert.deepEqual(summary(checks), ["- entryPoint: ok", "verifying code: FAIL"]);
});

test("another owner, a missing EntryPoint and a wrong chain id are each reported by their own check", async () => {
  const otherOwner = privateKeyToAccount(anvilKeys.stranger).address;
  const owned = await checkSite(env.publicClient, site, { ...context, owner: otherOwner });
  assert.deepEqual(
    failing(owned).map((check) => [check.kind, check.check]),
    [
      ["verifying", "owner"],
      ["token", "owner"],
      ["permitToken", "owner"],
    ],
  );
  assert.match(failing(owned)[0]?.detail ?? "", new RegExp(`owned by ${ANVIL_FIRST_ACCOUNT}`));

  const nowhere = getAddress("0x00000000000000000000000000000000000a11ce");
  const missing = await checkSite(env.publicClient, { ...site, entryPoint: nowhere }, context);
  assert.deepEqual(summary(missing), ["- entryPoint: FAIL"]);
  assert.match(missing[0]?.fix ?? "", new RegExp(v07.entryPoint));

  const wrongChain = await checkChain(
    env.publicClient,
    { chainId: 84532, name: "Base Sepolia", entryPoints: { "0.7": { verifyingPaymaster: v07.verifyingPaymaster } } },
    context,
  );
  assert.deepEqual(summary(wrongChain), ["- chainId: FAIL"]);
  assert.match(wrongChain[0]?.detail ?? "", new RegExp(`chain id ${env.anvil.chainId}`));
});

test("the up-front token paymaster has no contract for v0.6: naming one there fails the code check with its fix", async () => {
  const checks = await checkSite(
    env.publicClient,
    { version: "0.6", entryPoint: ENTRY_POINT_V06_ADDRESS, paymasters: { permitToken: v07.permitTokenPaymaster } },
    context,
  );
  assert.deepEqual(summary(checks), ["- entryPoint: ok", "permitToken code: FAIL"]);
  assert.match(checks[1]?.detail ?? "", /no permitToken paymaster for EntryPoint v0\.6/);
  assert.match(checks[1]?.fix ?? "", /v0\.7 or later/);
});

test("checkChain reads the sites from a chain's configuration: v0.6 at the top level, later versions by key", async () => {
  const chain = {
    chainId: env.anvil.chainId,
    name: "anvil",
    entryPoints: {
      "0.8": {
        verifyingPaymaster: v08.verifyingPaymaster.toLowerCase(),
        permitTokenPaymaster: v08.permitTokenPaymaster.toLowerCase(),
      },
    },
  };
  const checks = await checkChain(env.publicClient, chain, { signer: serviceKey });
  assert.deepEqual(
    checks.map((check) => [check.version, check.kind, check.check]),
    [
      [undefined, undefined, "chainId"],
      ["0.8", undefined, "entryPoint"],
      ["0.8", "verifying", "code"],
      ["0.8", "verifying", "owner"],
      ["0.8", "verifying", "signer"],
      ["0.8", "verifying", "stake"],
      ["0.8", "verifying", "deposit"],
      ["0.8", "permitToken", "code"],
      ["0.8", "permitToken", "owner"],
      ["0.8", "permitToken", "signer"],
      ["0.8", "permitToken", "stake"],
      ["0.8", "permitToken", "deposit"],
      ["0.8", "permitToken", "feeToken"],
    ],
  );
});

test("a fee token with other decimals or a feed that is not one is reported, naming the token", async () => {
  const [tusd] = LOCAL_TOKENS as [TokenConfig];
  const tokens: TokenConfig[] = [
    { ...tusd, symbol: "WRONGDEC", decimals: 18 },
    { ...tusd, symbol: "BADFEED", price: { aggregator: v07.entryPoint.toLowerCase() } },
    { ...tusd, symbol: "FIXED", price: { fixedRate: 3_000_000_000n } },
  ];
  const checks = await checkSite(
    env.publicClient,
    { ...site, paymasters: { token: v07.tokenPaymaster } },
    { ...context, tokens },
  );
  const feeTokens = checks.filter((check) => check.check === "feeToken");
  assert.deepEqual(
    feeTokens.map((check) => [check.ok, check.detail.split(":")[0]]),
    [
      [false, "WRONGDEC"],
      [false, "BADFEED"],
      [true, "FIXED"],
    ],
  );
  assert.match(feeTokens[0]?.detail ?? "", /6 decimals, the chains file says 18/);
  assert.match(feeTokens[1]?.detail ?? "", /cannot read a price from the feed/);
});
