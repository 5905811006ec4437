// The contract watch's verdict refuses every kind of request the way the final request refuses, naming the failed
// check: the ERC-7677 stub (SPONSORED mode, EntryPoint v0.6 and v0.7) while the service's key is out of the signer set,
// and given again once it is back; and ERC20 mode, whose refusal before the rules is -32003 with the check named,
// never a 500, once the owner unlocks a token paymaster's stake. The watch's own reporting is contractWatch.test.ts.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { type Address, encodeFunctionData, type Hex, parseAbi, parseEther } from "viem";
import { signerSetAbi } from "../../src/bindings/paymasters/signerSet";
import { REQUIRED_STAKE_WEI, REQUIRED_UNSTAKE_DELAY_SECONDS } from "../../src/chain/stakeRequirement";
import { withLocalChain } from "../../src/devChain/localChain";
import { LOCAL_TEST_TOKEN_ADDRESS, mintTestTokens } from "../../src/devChain/tokenDeployment";
import { anvilKeys } from "../contracts/fixtures";
import { confirm, depositForFunding, type LocalStacks, startLocalStacks } from "../contracts/v07/localStacks";
import { type Dapp, startTestApp, type TestApp } from "../helpers/app";
import { fundedDapp, rpc } from "../helpers/dappSetup";
import { userOpV07 } from "../helpers/userOps";

const INTERVAL_MS = 200;
const CHAIN_ID_HEX = "0x7a69";
const TARGET: Address = "0x1111111111111111111111111111111111111111";
const SENDER: Address = "0x2222222222222222222222222222222222222222";
const ownerAbi = parseAbi(["function addStake(uint32 unstakeDelaySec) payable", "function unlockStake()"]);
const simpleAccount = parseAbi(["function execute(address dest, uint256 value, bytes func)"]);

let env: LocalStacks;
let t: TestApp;
let nonce = 0;

interface Contracts {
  status: string;
  failed: { address: Address; check: string }[];
}

async function contracts(): Promise<Contracts> {
  const reply = await t.app.inject({ method: "GET", url: "/readyz" });
  const chains = (reply.json() as { chains: { chainId: number; contracts: Contracts }[] }).chains;
  const local = chains.find((chain) => chain.chainId === 31337);
  assert.ok(local);
  return local.contracts;
}

/** Waits for the watch's passes until `holds` is true of the local chain's verdict in /readyz. */
async function watchSees(holds: (contracts: Contracts) => boolean): Promise<void> {
  const started = Date.now();
  let last = await contracts();
  while (!holds(last)) {
    if (Date.now() - started > 20 * INTERVAL_MS + 5_000) assert.fail(`never held: ${JSON.stringify(last)}`);
    await new Promise((resolve) => setTimeout(resolve, INTERVAL_MS / 4));
    last = await contracts();
  }
}

const ownerSends = (address: Address, data: Hex, value = 0n) =>
  confirm(env, env.wallet(anvilKeys.owner).sendTransaction({ to: address, data, value }));

before(async () => {
  env = await startLocalStacks();
  t = await startTestApp({
    signer: env.serviceSigner,
    chains: withLocalChain(new Map([[31337, { chainId: 31337, name: "local" }]]), env.chain),
    contractChecks: { intervalMs: INTERVAL_MS },
  });
  // The local chain leaves the verifying paymasters unstaked: staked here, so that every check holds to start with.
  const unstaked = (await contracts()).failed.filter((failed) => failed.check === "stake");
  const addStake = encodeFunctionData({
    abi: ownerAbi,
    functionName: "addStake",
    args: [REQUIRED_UNSTAKE_DELAY_SECONDS],
  });
  for (const failed of unstaked) await ownerSends(failed.address, addStake, REQUIRED_STAKE_WEI);
  await watchSees((checks) => checks.status === "ok");
});

after(async () => {
  await t?.close();
  await env?.stop();
});

type Version = "0.6" | "0.7";

/** A deployed SimpleAccount's call of TARGET with nothing, gas and fees given, in the version's shape. */
function operation(version: Version): Record<string, string> {
  const op = userOpV07(SENDER, ++nonce, {
    callData: encodeFunctionData({ abi: simpleAccount, functionName: "execute", args: [TARGET, 0n, "0x"] }),
    signature: "0x",
  });
  return version === "0.6" ? { ...op, initCode: "0x" } : op;
}

const entryPointOf = (version: Version) =>
  version === "0.6" ? env.chain.info.entryPoint : env.chain.info.entryPoints[version].entryPoint;
const verifyingPaymasterOf = (version: Version) =>
  version === "0.6" ? env.chain.info.verifyingPaymaster : env.chain.info.entryPoints[version].verifyingPaymaster;

async function erc7677(dapp: Dapp, method: string, version: Version, context: object = {}) {
  return rpc(t, dapp, method, [operation(version), entryPointOf(version), CHAIN_ID_HEX, context]);
}

/** The JSON-RPC error of a refused request: HTTP 400, never a 5xx. */
function refusal(reply: Awaited<ReturnType<typeof rpc>>): { code: number; message: string } {
  const error = reply.body.error as { code: number; message: string } | undefined;
  assert.ok(error, `refused, not ${JSON.stringify(reply.body)}`);
  assert.equal(reply.status, 400, JSON.stringify(reply.body));
  return error;
}

test("the ERC-7677 stub is refused, naming the signer check, while the service's key is out of the signer set; given again once it is back", async () => {
  const dapp = await fundedDapp(t, { fundingKey: anvilKeys.fundingWallet, contract: { address: TARGET } });
  await depositForFunding(env, ["0.6", "0.7"], parseEther("1"));
  const versions: Version[] = ["0.6", "0.7"];
  for (const version of versions) {
    const given = await erc7677(dapp, "pm_getPaymasterStubData", version);
    assert.equal(given.status, 200, JSON.stringify(given.body));
    assert.equal(given.body.error, undefined, `v${version} stub while every check holds`);
  }

  const signer = env.serviceSigner.address;
  const removeSigner = encodeFunctionData({ abi: signerSetAbi, functionName: "removeSigner", args: [signer] });
  for (const version of versions) await ownerSends(verifyingPaymasterOf(version), removeSigner);
  await watchSees((checks) => checks.failed.filter((failed) => failed.check === "signer").length === versions.length);

  for (const version of versions) {
    const reason =
      `Our verifying paymaster ${verifyingPaymasterOf(version)} for EntryPoint v${version} on chain 31337 fails its ` +
      `signer check: the service's key ${signer} is not in the signer set: its signatures fail on chain (AA34)`;
    const atStub = refusal(await erc7677(dapp, "pm_getPaymasterStubData", version));
    assert.deepEqual(atStub, { code: -32003, message: `Not sponsored: ${reason}` }, `v${version} stub`);
    const atFinal = refusal(await erc7677(dapp, "pm_getPaymasterData", version));
    assert.deepEqual(atFinal, atStub, `v${version}: the final request refuses in the same words`);
  }

  const addSigner = encodeFunctionData({ abi: signerSetAbi, functionName: "addSigner", args: [signer] });
  for (const version of versions) await ownerSends(verifyingPaymasterOf(version), addSigner);
  await watchSees((checks) => checks.status === "ok");
  for (const version of versions) {
    const given = await erc7677(dapp, "pm_getPaymasterStubData", version);
    assert.equal(given.status, 200, JSON.stringify(given.body));
    assert.equal(given.body.error, undefined, `v${version} stub once the key is back`);
  }
});

test("ERC20 mode for a token paymaster whose stake the owner unlocked: -32003 naming the stake check, never a 500", async () => {
  await watchSees((checks) => checks.status === "ok");
  // ERC20 mode needs no funding wallet or rule: a bare dApp, and a sender holding the fee token.
  const dapp = await t.dapp();
  const owner = env.wallet(anvilKeys.owner);
  await mintTestTokens({ publicClient: env.publicClient, walletClient: owner }, SENDER, 10n ** 24n);
  const token = { token: LOCAL_TEST_TOKEN_ADDRESS };
  for (const method of ["pm_getPaymasterStubData", "pm_getPaymasterData"]) {
    const given = await erc7677(dapp, method, "0.7", token);
    assert.equal(given.body.error, undefined, `${method} while every check holds: ${JSON.stringify(given.body)}`);
  }
  // A quote passes the same checks as a signature: no price is given for a paymaster that would refuse.
  const quote = () => rpc(t, dapp, "pm_getFeeQuoteOrData", [operation("0.7"), entryPointOf("0.7"), token]);
  const quoted = await quote();
  assert.equal(quoted.body.error, undefined, `a quote while every check holds: ${JSON.stringify(quoted.body)}`);

  const tokenPaymaster = env.chain.info.entryPoints["0.7"].tokenPaymaster;
  await ownerSends(tokenPaymaster, encodeFunctionData({ abi: ownerAbi, functionName: "unlockStake" }));
  await watchSees((checks) => checks.status === "failing");

  const message =
    `Not sponsored: Our token paymaster ${tokenPaymaster} for EntryPoint v0.7 on chain 31337 fails its stake check: ` +
    "stake 1, unstake delay 86400 s: the stake is unlocking (unlock-stake was called)";
  for (const method of ["pm_getPaymasterData", "pm_getPaymasterStubData"]) {
    const refused = refusal(await erc7677(dapp, method, "0.7", token));
    assert.deepEqual(refused, { code: -32003, message }, method);
  }
  assert.deepEqual(refusal(await quote()), { code: -32003, message }, "pm_getFeeQuoteOrData");
});
