// The service's checks of its own contracts, on the local chain with every paymaster of every EntryPoint version: at
// start, /readyz names what fails (stake, here); the owner's transactions on chain (a stake, a signer removed, a stake
// unlocked, the signer added back) show in /readyz, in the chains endpoint and in the sponsorship's refusal within a
// pass of the watch, without a restart.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { type Address, encodeFunctionData, type Hex, parseAbi, parseEther } from "viem";
import { signerSetAbi } from "../../src/bindings/paymasters/signerSet";
import { REQUIRED_STAKE_WEI, REQUIRED_UNSTAKE_DELAY_SECONDS } from "../../src/chain/stakeRequirement";
import { withLocalChain } from "../../src/devChain/localChain";
import { simpleAccountAbi } from "../../src/devChain/simpleAccount";
import { anvilKeys } from "../contracts/fixtures";
import { confirm, depositForFunding, type LocalStacks, startLocalStacks } from "../contracts/v07/localStacks";
import { startTestApp, type TestApp } from "../helpers/app";
import { fundedDapp, rpc } from "../helpers/dappSetup";
import { ESTIMATED_GAS, userOpV06 } from "../helpers/userOps";

const INTERVAL_MS = 200;
const TARGET: Address = "0x1111111111111111111111111111111111111111";
const ownerAbi = parseAbi(["function addStake(uint32 unstakeDelaySec) payable", "function unlockStake()"]);

let env: LocalStacks;
let t: TestApp;

before(async () => {
  env = await startLocalStacks();
  t = await startTestApp({
    signer: env.serviceSigner,
    chains: withLocalChain(new Map([[31337, { chainId: 31337, name: "local" }]]), env.chain),
    contractChecks: { intervalMs: INTERVAL_MS },
  });
});

after(async () => {
  await t?.close();
  await env?.stop();
});

interface FailedCheck {
  entryPointVersion?: string;
  kind?: string;
  address: Address;
  check: string;
  detail: string;
  fix?: string;
}
interface ReadyChain {
  chainId: number;
  contracts: { status: string; checkedAt?: string; failed: FailedCheck[] };
}

async function readyChain(): Promise<{ status: string; chain: ReadyChain }> {
  const reply = await t.app.inject({ method: "GET", url: "/readyz" });
  const body = reply.json() as { status: string; chains: ReadyChain[] };
  const chain = body.chains.find((entry) => entry.chainId === 31337);
  assert.ok(chain);
  return { status: body.status, chain };
}

/** Waits for the watch's next passes until `holds` is true of /readyz's local chain; throws with the last one. */
async function readyWhen(
  holds: (chain: ReadyChain) => boolean,
): Promise<{ status: string; chain: ReadyChain; ms: number }> {
  const started = Date.now();
  let last = await readyChain();
  while (!holds(last.chain)) {
    if (Date.now() - started > 20 * INTERVAL_MS + 5_000) assert.fail(`never held: ${JSON.stringify(last)}`);
    await new Promise((resolve) => setTimeout(resolve, INTERVAL_MS / 4));
    last = await readyChain();
  }
  return { ...last, ms: Date.now() - started };
}

async function ownerSends(address: Address, data: Hex, value = 0n): Promise<void> {
  await confirm(env, env.wallet(anvilKeys.owner).sendTransaction({ to: address, data, value }));
}

/** A v0.6 operation of a deployed SimpleAccount calling TARGET with nothing, gas given: what the rules can pass. */
function operation(nonce: number) {
  return userOpV06("0x2222222222222222222222222222222222222222", nonce, {
    callData: encodeFunctionData({ abi: simpleAccountAbi, functionName: "execute", args: [TARGET, 0n, "0x"] }),
    ...ESTIMATED_GAS,
    signature: "0x",
  });
}

test("at start every unstaked paymaster fails its stake check; staked by the owner, the chain's checks hold", async () => {
  const first = await readyChain();
  assert.equal(first.chain.contracts.status, "failing");
  assert.equal(first.status, "degraded");
  assert.ok(first.chain.contracts.checkedAt, "the first pass ran before the app answered");
  const unstaked = first.chain.contracts.failed;
  // The local chain stakes only the token paymasters of v0.7 and later (docs/local-chain.md); the others are not.
  assert.deepEqual(unstaked.map((failed) => `${failed.entryPointVersion} ${failed.kind} ${failed.check}`).sort(), [
    "0.6 token stake",
    "0.6 verifying stake",
    "0.7 verifying stake",
    "0.8 verifying stake",
    "0.9 verifying stake",
  ]);
  for (const failed of unstaked) {
    assert.match(failed.detail, /^stake 0, unstake delay 0 s: not staked, stake below 1000000000000000000 wei/);
    assert.match(failed.fix ?? "", /contracts stake --amount 1 --unstake-delay 86400/);
  }

  for (const failed of unstaked) {
    const data = encodeFunctionData({
      abi: ownerAbi,
      functionName: "addStake",
      args: [REQUIRED_UNSTAKE_DELAY_SECONDS],
    });
    await ownerSends(failed.address, data, REQUIRED_STAKE_WEI);
  }
  const staked = await readyWhen((chain) => chain.contracts.status === "ok");
  assert.deepEqual(staked.chain.contracts.failed, []);
  assert.equal(staked.status, "ready");
});

test("the service's key removed from a signer set: readyz, the chains endpoint and the refusal name the signer check; added back, sponsored again", async (context) => {
  await readyWhen((chain) => chain.contracts.status === "ok");
  const dapp = await fundedDapp(t, { fundingKey: anvilKeys.fundingWallet, contract: { address: TARGET } });
  // The dApp's funding wallet is the local stacks' one.
  await depositForFunding(env, ["0.6"], parseEther("1"));
  const paymaster = env.chain.info.verifyingPaymaster;
  const sponsor = async (nonce: number) => {
    const reply = await rpc(t, dapp, "pm_sponsorUserOperation", [
      operation(nonce),
      {
        mode: "SPONSORED",
        calculateGasLimits: false,
        sponsorshipInfo: { smartAccountInfo: { name: "INFINITISM", version: "1.0.0" } },
      },
    ]);
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    return reply.body.result as { paymasterAndData: Hex; reason?: string };
  };
  assert.notEqual((await sponsor(1)).paymasterAndData, "0x", "sponsored while every check holds");

  const signer = env.serviceSigner.address;
  await ownerSends(paymaster, encodeFunctionData({ abi: signerSetAbi, functionName: "removeSigner", args: [signer] }));
  const removed = await readyWhen((chain) => chain.contracts.status === "failing");
  context.diagnostic(`removeSigner seen by /readyz ${removed.ms} ms after its receipt (interval ${INTERVAL_MS} ms)`);
  assert.equal(removed.status, "degraded");
  assert.deepEqual(removed.chain.contracts.failed, [
    {
      entryPointVersion: "0.6",
      kind: "verifying",
      address: paymaster,
      check: "signer",
      detail: `the service's key ${signer} is not in the signer set: its signatures fail on chain (AA34)`,
      fix: `add it with \`contracts signers add --signer ${signer}\` and the owner's --key-file`,
    },
  ]);
  const listed = await t.call("GET", "chains", { token: dapp.token });
  const local = (listed.body.data as Array<{ chainId: number; checks: unknown }>).find(
    (chain) => chain.chainId === 31337,
  );
  assert.deepEqual(local?.checks, removed.chain.contracts, "the chains endpoint shows the same verdict");

  const refused = await sponsor(2);
  assert.equal(refused.paymasterAndData, "0x");
  assert.equal(
    refused.reason,
    `Our verifying paymaster ${paymaster} for EntryPoint v0.6 on chain 31337 fails its signer check: ` +
      `the service's key ${signer} is not in the signer set: its signatures fail on chain (AA34)`,
  );
  const records = await t.db.query<{ reason: string; rule_outcomes: unknown }>(
    "SELECT reason, rule_outcomes FROM sponsorships WHERE nonce = 2",
  );
  assert.deepEqual(records, [{ reason: refused.reason, rule_outcomes: [] }], "recorded, refused before any rule ran");

  await ownerSends(paymaster, encodeFunctionData({ abi: signerSetAbi, functionName: "addSigner", args: [signer] }));
  await readyWhen((chain) => chain.contracts.status === "ok");
  assert.notEqual((await sponsor(3)).paymasterAndData, "0x", "sponsored again once the key is back");
});

test("a stake unlocked by the owner fails the stake check of that paymaster only", async () => {
  await readyWhen((chain) => chain.contracts.status === "ok");
  const tokenPaymaster = env.chain.info.entryPoints["0.7"].tokenPaymaster;
  await ownerSends(tokenPaymaster, encodeFunctionData({ abi: ownerAbi, functionName: "unlockStake" }));
  const unlocked = await readyWhen((chain) => chain.contracts.status === "failing");
  assert.deepEqual(
    unlocked.chain.contracts.failed.map(({ entryPointVersion, kind, check, detail }) => ({
      entryPointVersion,
      kind,
      check,
      detail,
    })),
    [
      {
        entryPointVersion: "0.7",
        kind: "token",
        check: "stake",
        detail: "stake 1, unstake delay 86400 s: the stake is unlocking (unlock-stake was called)",
      },
    ],
  );
});
