// The deposit at pm_getPaymasterStubData, read on the service's local chain (anvil, the real EntryPoints and our
// paymasters) for EntryPoint v0.6 and v0.7 operations: a deposit that cannot pay even the cheapest completion of the
// operation is refused at the stub as the final request refuses it; a deposit that covers exactly one operation still
// sponsors it after many stubs (the stub held nothing), and once that sponsorship holds it the stub refuses too. The
// stub's reading of the deposit raises no deposit alert; the final request's does.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type Address, type Hex, toHex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { ENTRY_POINT_V06_ADDRESS } from "../../src/bindings/entryPoints/entryPoint";
import { ENTRY_POINT_V07_ADDRESS } from "../../src/bindings/entryPoints/entryPointV07";
import { maxChargeWei, POST_OP_OVERHEAD_GAS, worstCaseCostWeiV07 } from "../../src/bindings/entryPoints/prefund";
import { verifyingPaymasterArtifact, verifyingPaymasterV07Artifact } from "../../src/bindings/paymasters/artifacts";
import {
  PAYMASTER_POST_OP_GAS_LIMIT_V07,
  PAYMASTER_VERIFICATION_GAS_LIMIT_V07,
} from "../../src/bindings/paymasters/verifyingPaymasterGasV07";
import type { ChainConfig } from "../../src/config";
import { weiToEther } from "../../src/sponsorship/spendingLimit";
import { listSponsorships } from "../../src/storage/sponsorships";
import { outboxOf, setAlerts } from "../alerts/helpers";
import { anvilKeys } from "../contracts/fixtures";
import { confirm, type LocalStacks, startLocalStacks } from "../contracts/v07/localStacks";
import { type Dapp, startTestApp, type TestApp } from "../helpers/app";
import { addPolicy, linkFundingWallet, rpc } from "../helpers/dappSetup";
import { eventually } from "../helpers/eventually";

let env: LocalStacks | undefined;
let t: TestApp | undefined;
let offsetMs = 0;
let nonce = 0;

before(async () => {
  env = await startLocalStacks();
  const chain: ChainConfig = { chainId: 31337, name: "local", rpcUrl: env.chain.rpcUrl };
  t = await startTestApp({
    signer: env.serviceSigner,
    chains: new Map([[31337, chain]]),
    now: () => Date.now() + offsetMs,
  });
});
after(async () => {
  try {
    await t?.close();
  } finally {
    await env?.stop();
  }
});

function started(): { env: LocalStacks; t: TestApp } {
  assert.ok(env && t, "the chain or the service did not start");
  return { env, t };
}

type Version = "0.6" | "0.7";
const FEE = 1_000_000_000n;
const GAS = { callGasLimit: 100_000n, verificationGasLimit: 200_000n, preVerificationGas: 50_000n, maxFeePerGas: FEE };

/** The most the final operation can take from the deposit in each version. */
const NEEDED: Record<Version, bigint> = {
  "0.6": maxChargeWei(GAS),
  "0.7": worstCaseCostWeiV07({
    ...GAS,
    paymasterVerificationGasLimit: PAYMASTER_VERIFICATION_GAS_LIMIT_V07,
    paymasterPostOpGasLimit: PAYMASTER_POST_OP_GAS_LIMIT_V07,
  }),
};
/** The least it can take while its gas is not estimated (fees sent, limits not): what the stub weighs. */
const CHEAPEST: Record<Version, bigint> = {
  "0.6": POST_OP_OVERHEAD_GAS * FEE,
  "0.7": (PAYMASTER_VERIFICATION_GAS_LIMIT_V07 + PAYMASTER_POST_OP_GAS_LIMIT_V07) * FEE,
};

function operation(version: Version, withGas: boolean): Record<string, string> {
  const gas: Record<string, string> = withGas
    ? {
        callGasLimit: toHex(GAS.callGasLimit),
        verificationGasLimit: toHex(GAS.verificationGasLimit),
        preVerificationGas: toHex(GAS.preVerificationGas),
      }
    : {};
  return {
    sender: "0x4df23b78543f5c2f9cbcdf09956288b3e97bb9a4",
    nonce: toHex(++nonce),
    ...(version === "0.6" ? { initCode: "0x" } : ({} as Record<string, string>)),
    callData: "0x",
    ...gas,
    maxFeePerGas: toHex(FEE),
    maxPriorityFeePerGas: toHex(FEE),
    signature: "0x",
  };
}

const erc7677 = (dapp: Dapp, method: string, version: Version, op: Record<string, string>) =>
  rpc(started().t, dapp, method, [
    op,
    version === "0.6" ? ENTRY_POINT_V06_ADDRESS : ENTRY_POINT_V07_ADDRESS,
    "0x7a69",
    {},
  ]);

async function refused(dapp: Dapp, method: string, version: Version, op: Record<string, string>): Promise<string> {
  const reply = await erc7677(dapp, method, version, op);
  const error = reply.body.error as { code: number; message: string } | undefined;
  assert.ok(error, `${method} answered ${JSON.stringify(reply.body)}`);
  assert.equal(error.code, -32003, error.message);
  return error.message;
}

async function accepted(dapp: Dapp, method: string, version: Version, op: Record<string, string>) {
  const reply = await erc7677(dapp, method, version, op);
  assert.equal(reply.body.error, undefined, `${method}: ${JSON.stringify(reply.body.error)}`);
}

const tooSmall = (wallet: string, balance: bigint, held: bigint, needed: bigint) =>
  `Not sponsored: Deposit too small: the paymaster's deposit for ${wallet} is ${weiToEther(balance)} ETH, ` +
  `${weiToEther(held)} ETH is held by unexpired sponsorships, this operation needs up to ${weiToEther(needed)} ETH`;

/** Puts `value` in `key`'s deposit in the version's verifying paymaster; the service reads it after its 2 s cache. */
async function depositFor(version: Version, key: Hex, value: bigint) {
  const { env } = started();
  const wallet = env.wallet(anvilKeys.fundingWallet);
  const address = privateKeyToAccount(key).address;
  const paymaster: Address =
    version === "0.6" ? env.chain.info.verifyingPaymaster : env.chain.info.entryPoints["0.7"].verifyingPaymaster;
  const abi = version === "0.6" ? verifyingPaymasterArtifact.abi : verifyingPaymasterV07Artifact.abi;
  await confirm(
    env,
    wallet.writeContract({ address: paymaster, abi, functionName: "depositFor", args: [address], value }),
  );
  offsetMs += 2_500;
}

for (const version of ["0.6", "0.7"] as const) {
  describe(`EntryPoint v${version}: the deposit at the stub`, () => {
    test("empty: refused at the stub (its cheapest completion) and at the final request (its worst case)", async () => {
      const { t } = started();
      const key = generatePrivateKey();
      const dapp = await t.dapp();
      const wallet = await linkFundingWallet(t, dapp, key);
      await addPolicy(t, dapp, "WALLET_DEPLOYMENT", {});

      // A deposit alert armed: the final request's reading raises it, the stub's (no sponsorship) must not.
      await setAlerts(t, dapp, "http://127.0.0.1:9/alerts", "1");

      const atStub = await refused(dapp, "pm_getPaymasterStubData", version, operation(version, false));
      assert.equal(atStub, tooSmall(wallet, 0n, 0n, CHEAPEST[version]));
      // The final request a second later on the service's clock. The readings of a deposit are noted one after the
      // other in the order they were taken, so once the final request's alert is queued, a reading of the stub's
      // would have been noted before it, and queued the alert (the deposit is below the threshold for both).
      offsetMs += 1_000;
      const finalFromMs = Date.now() + offsetMs;
      const atFinal = await refused(dapp, "pm_getPaymasterData", version, operation(version, true));
      assert.equal(atFinal, tooSmall(wallet, 0n, 0n, NEEDED[version]));
      const queued = await eventually(
        "the final request's reading alerts",
        () => outboxOf(t, dapp.paymasterId),
        (rows) => rows.length > 0,
      );
      assert.deepEqual(
        queued.map((row) => [row.event, Number(row.created_ms) >= finalFromMs]),
        [["deposit.low", true]],
        "one alert, queued by the final request's reading: the stub told the deposit alert nothing",
      );
    });

    test("exactly one operation's worth: many stubs hold nothing; once it is signed, the stub refuses", async () => {
      const { t } = started();
      const key = generatePrivateKey();
      const dapp = await t.dapp();
      const wallet = await linkFundingWallet(t, dapp, key);
      await addPolicy(t, dapp, "WALLET_DEPLOYMENT", {});
      await depositFor(version, key, NEEDED[version]);

      for (let i = 0; i < 3; i++) {
        await accepted(dapp, "pm_getPaymasterStubData", version, operation(version, false));
        await accepted(dapp, "pm_getPaymasterStubData", version, operation(version, true));
      }
      assert.deepEqual(await listSponsorships(t.db, dapp.paymasterId), [], "the stubs recorded nothing");
      await accepted(dapp, "pm_getPaymasterData", version, operation(version, true));

      // The signed operation holds the whole deposit: even the cheapest next one cannot be paid.
      const next = await refused(dapp, "pm_getPaymasterStubData", version, operation(version, false));
      assert.equal(next, tooSmall(wallet, NEEDED[version], NEEDED[version], CHEAPEST[version]));
    });
  });
}
