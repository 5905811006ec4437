// The ERC-7562 check (test/helpers/erc7562.ts) of every paymaster we ship, on every path of its validation, traced in a
// bundle on anvil with the real EntryPoint: a bundler in safe mode would accept each of them. And the same check fails
// on variants of the up-front token paymaster that read the clock or write a slot of the token that is no entity's.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  type Abi,
  type Address,
  concat,
  encodeAbiParameters,
  encodeFunctionData,
  maxUint256,
  parseAbi,
  parseEther,
  type SignedAuthorization,
  zeroAddress,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { misbehavingPermitTokenPaymasterAbi } from "../../contracts/artifacts/MisbehavingPermitTokenPaymaster.abi";
import misbehavingPermitTokenPaymasterJson from "../../contracts/artifacts/MisbehavingPermitTokenPaymaster.json" with {
  type: "json",
};
import { ENTRY_POINT_V06_ADDRESS, entryPointAbi } from "../../src/bindings/entryPoints/entryPoint";
import { entryPointV07Abi } from "../../src/bindings/entryPoints/entryPointV07";
import {
  PAYMASTER_SIGNATURE_PLACEHOLDER,
  paymasterSignatureSuffix,
} from "../../src/bindings/entryPoints/entryPointV09";
import { type PackedUserOperation, packPaymasterAndData } from "../../src/bindings/entryPoints/packedUserOperation";
import type { UserOperation } from "../../src/bindings/entryPoints/userOperation";
import { verifyingPaymasterV07Artifact, verifyingPaymasterV09Artifact } from "../../src/bindings/paymasters/artifacts";
import { loadOwnArtifact } from "../../src/bindings/paymasters/ownArtifact";
import { verifyingDataParameters } from "../../src/bindings/paymasters/paymasterAndData";
import {
  encodeVerifyingPaymasterAndDataV07,
  getVerifyingPaymasterHashV07,
} from "../../src/bindings/paymasters/paymasterAndDataV07";
import {
  encodeTokenPaymasterAndData,
  getTokenPaymasterHash,
  PRICE_SOURCE,
  type TokenFeeTerms,
} from "../../src/bindings/paymasters/tokenPaymasterAndData";
import { create2Address } from "../../src/chain/create2";
import {
  REQUIRED_STAKE_WEI,
  REQUIRED_UNSTAKE_DELAY_SECONDS,
  readStake,
  stakeShortfalls,
} from "../../src/chain/stakeRequirement";
import { type Create2Deployment, paymasterDeployment } from "../../src/devChain/deployments";
import { deployCreate2Batch } from "../../src/devChain/localBatch";
import { prepareLocalTokenStack } from "../../src/devChain/localTokens";
import {
  LOCAL_PRICE_AGGREGATOR_ADDRESS,
  LOCAL_TEST_TOKEN_ADDRESS,
  LOCAL_TOKEN_PAYMASTER_ADDRESS,
  mintTestTokens,
} from "../../src/devChain/tokenDeployment";
import { checkPaymasterValidation, traceCall, type ValidationReport } from "../helpers/erc7562";
import {
  anvilKeys,
  depositOn,
  type LocalChain,
  latestTimestamp,
  newAccountOperation,
  type Sponsored,
  signByAccount as signByAccountV06,
  sponsor,
  startSponsoredChain,
} from "./fixtures";
import {
  gasLimitsV07,
  newAccountOperationV07,
  type SponsoredV07,
  signByAccountV07,
  sponsorV07,
  startSponsoredChainV07,
} from "./v07/fixtures";
import {
  draftOperation,
  eip7702Sender,
  erc1271Sender,
  executeCall,
  handleOps,
  maxCharge,
  type PermitTokenChain,
  type Sender,
  signByAccount,
  signOperation,
  signPermit,
  stakeAndFund,
  startPermitTokenChain,
  TOKENS,
  terms,
  userOpHashOf,
} from "./v07/permitTokenFixtures";
import {
  approveCall,
  draftOperation as draftTokenOperation,
  newAccount,
  quote,
  signByService,
  startTokenChainV07,
  type TokenChainV07,
} from "./v07/tokenFixtures";

const TARGET: Address = "0x000000000000000000000000000000000000dEaD";
const bundler = privateKeyToAccount(anvilKeys.bundler).address;

interface Bundle {
  env: Pick<LocalChain, "anvil" | "publicClient">;
  entryPoint: Address;
  /** v0.6's EntryPoint takes its own UserOperation; v0.7 to v0.9 the packed one. */
  abi: Abi;
  op: { sender: Address; initCode: `0x${string}` };
  paymaster: Address;
  authorizationList?: readonly SignedAuthorization[];
}

/**
 * The bundle of one operation traced as a bundler simulates it, and the paymaster's validation checked; `unstaked`
 * judges it as if the paymaster were not staked.
 */
async function check(bundle: Bundle, unstaked = false): Promise<ValidationReport> {
  const { env, entryPoint, op, paymaster } = bundle;
  const stake = await readStake(env.publicClient, entryPoint, paymaster);
  const data = encodeFunctionData({ abi: bundle.abi, functionName: "handleOps", args: [[op], bundler] });
  const { failed, logs } = await traceCall(env.anvil.rpcUrl, {
    from: bundler,
    to: entryPoint,
    data,
    ...(bundle.authorizationList ? { authorizationList: bundle.authorizationList } : {}),
  });
  assert.equal(failed, false, "the bundle runs");
  const report = checkPaymasterValidation(logs, {
    entryPoint,
    sender: op.sender,
    paymaster,
    paymasterStaked: !unstaked && stakeShortfalls(stake).length === 0,
    deploysSender: op.initCode !== "0x",
  });
  assert.equal(report.validations, 1, "the paymaster's validation was found in the trace");
  return report;
}

function passes(t: { diagnostic(message: string): void }, name: string, report: ValidationReport) {
  assert.deepEqual(report.violations, [], name);
  const rules = new Map<string, number>();
  for (const access of report.storage) rules.set(access.allowedBy ?? "", (rules.get(access.allowedBy ?? "") ?? 0) + 1);
  t.diagnostic(
    `${name}: ${report.steps} steps, ${report.storage.length} storage accesses (${[...rules]
      .map(([rule, count]) => `${count} ${rule.split(" ")[0]}`)
      .join(", ")})`,
  );
}

const misbehavingArtifact = loadOwnArtifact(
  misbehavingPermitTokenPaymasterJson,
  "MisbehavingPermitTokenPaymaster",
  misbehavingPermitTokenPaymasterAbi,
);
const MISSTEP = { readsClock: 0, writesTokenSupply: 1 } as const;

/** The up-front token paymaster's paths on one version: with a permit or without, signed rate or oracle. */
function permitPaymasterPaths(version: "0.7" | "0.8" | "0.9") {
  let env: PermitTokenChain;
  before(async () => {
    env = await startPermitTokenChain(version);
  });
  after(() => env?.anvil.stop());

  async function operation(
    sender: Sender,
    options: { permit?: boolean; oracle?: boolean; parallel?: boolean },
    paymaster = env.paymaster,
  ) {
    const draft = await draftOperation(env, sender, executeCall(TARGET));
    const permit = options.permit
      ? await signPermit(env, sender, maxCharge(draft) * 3n, { spender: paymaster })
      : undefined;
    const quote = await terms(env, {
      ...(permit ? { permit } : {}),
      ...(options.oracle ? { priceSource: 1, oracleAggregator: env.aggregator, exchangeRate: 0n } : {}),
      ...(options.parallel ? { parallel: true } : {}),
    });
    const op = await signOperation(env, sender, draft, quote, env.serviceSigner, paymaster);
    const bundle: Bundle = { env, entryPoint: env.entryPoint, abi: entryPointV07Abi, op, paymaster };
    return { op, bundle: sender.authorization ? { ...bundle, authorizationList: [sender.authorization] } : bundle };
  }
  return { env: () => env, operation };
}

describe("PermitTokenPaymasterV07 on EntryPoint v0.7", () => {
  const { env, operation } = permitPaymasterPaths("0.7");

  test("every path passes: a first operation with a permit and the token's first charge, the oracle, no permit", async (t) => {
    const sender = await erc1271Sender(env(), TOKENS(100n));
    const first = await operation(sender, { permit: true });
    passes(
      t,
      "permit, first operation (ERC-1271, account deployed by initCode), first charge",
      await check(first.bundle),
    );
    passes(t, "permit, oracle price", await check((await operation(sender, { permit: true, oracle: true })).bundle));
    // Mined: the permit of three times the maximum leaves an allowance that covers the next operation.
    await handleOps(env(), [first.op], [sender]);
    passes(t, "no permit (the allowance covers it), signed rate", await check((await operation(sender, {})).bundle));
    passes(t, "no permit, oracle price", await check((await operation(sender, { oracle: true })).bundle));
  });

  test("it fails on a variant that reads TIMESTAMP, and on one that writes a slot of the token no entity owns", async () => {
    const owner = privateKeyToAccount(anvilKeys.owner).address;
    const variants = await deployCreate2Batch(env().clients(anvilKeys.owner), {
      readsClock: misbehaving(env().entryPoint, owner, MISSTEP.readsClock),
      writesTokenSupply: misbehaving(env().entryPoint, owner, MISSTEP.writesTokenSupply),
    });
    for (const variant of Object.values(variants))
      await stakeAndFund(env(), variant.address, env().serviceSigner.address);

    const sender = await erc1271Sender(env(), TOKENS(100n));
    const clock = await check((await operation(sender, { permit: true }, variants.readsClock.address)).bundle);
    assert.deepEqual(
      clock.violations.map(({ rule, detail }) => ({ rule, detail: detail.split(" at pc")[0] })),
      [{ rule: "OP-011", detail: `TIMESTAMP in ${variants.readsClock.address}` }],
    );
    const supply = await check((await operation(sender, { permit: true }, variants.writesTokenSupply.address)).bundle);
    assert.equal(supply.violations.length, 1, JSON.stringify(supply.violations));
    assert.equal(supply.violations[0]?.rule, "STO");
    assert.match(supply.violations[0]?.detail ?? "", new RegExp(`^writes slot 0x0{63}2 of ${env().token}`));
  });
});

function misbehaving(entryPoint: Address, owner: Address, misstep: number): Create2Deployment {
  const base = paymasterDeployment("MisbehavingPermitTokenPaymaster", misbehavingArtifact, { entryPoint, owner });
  const initCode = concat([base.initCode, encodeAbiParameters([{ type: "uint8" }], [misstep])]);
  return { name: `MisbehavingPermitTokenPaymaster ${misstep}`, initCode, address: create2Address(initCode) };
}

describe("PermitTokenPaymasterV07 on EntryPoint v0.8", () => {
  const { env, operation } = permitPaymasterPaths("0.8");

  test("an EOA delegated with EIP-7702 in the bundle's transaction, its owner's permit checked through ERC-1271", async (t) => {
    const sender = await eip7702Sender(env(), TOKENS(100n));
    passes(t, "EIP-7702, permit, first charge", await check((await operation(sender, { permit: true })).bundle));
  });
});

describe("PermitTokenPaymasterV07 on EntryPoint v0.9", () => {
  const { env, operation } = permitPaymasterPaths("0.9");

  test("signed apart (parallel) and in paymasterData (sequential), with a permit", async (t) => {
    const sender = await erc1271Sender(env(), TOKENS(100n));
    passes(t, "v0.9 parallel, permit", await check((await operation(sender, { permit: true, parallel: true })).bundle));
    passes(t, "v0.9 sequential, permit", await check((await operation(sender, { permit: true })).bundle));
  });
});

/** The owner stakes a paymaster as `contracts stake` does: bundlers ask it of any paymaster that keeps storage. */
async function stake(env: Pick<LocalChain, "wallet" | "publicClient">, paymaster: Address) {
  const hash = await env.wallet(anvilKeys.owner).writeContract({
    address: paymaster,
    abi: parseAbi(["function addStake(uint32 unstakeDelaySec) payable"]),
    functionName: "addStake",
    args: [REQUIRED_UNSTAKE_DELAY_SECONDS],
    value: REQUIRED_STAKE_WEI,
  });
  await env.publicClient.waitForTransactionReceipt({ hash });
}

const DAPP_DEPOSIT = parseEther("1");

/** What the service signs for a dApp funded by anvil's funding wallet, valid for five minutes of the chain's time. */
async function sponsorship(env: Sponsored | SponsoredV07) {
  return {
    paymaster: env.paymaster,
    paymasterId: privateKeyToAccount(anvilKeys.fundingWallet).address,
    signer: env.serviceSigner,
    validUntil: (await latestTimestamp(env)) + 300,
    validAfter: 0,
    chainId: env.anvil.chainId,
  };
}

describe("EntryPoint v0.6: VerifyingPaymaster and TokenPaymaster", () => {
  let env: Sponsored;
  before(async () => {
    env = await startSponsoredChain();
    // The local chain's token stack: allowanceRequired off, as the approve-in-the-batch flow needs.
    await prepareLocalTokenStack(env.clients(anvilKeys.owner), env.serviceSigner.address);
    await depositOn(env, DAPP_DEPOSIT);
    for (const paymaster of [env.paymaster, LOCAL_TOKEN_PAYMASTER_ADDRESS]) await stake(env, paymaster);
  });
  after(() => env?.anvil.stop());

  const bundle = (op: UserOperation, paymaster: Address): Bundle => ({
    env,
    entryPoint: ENTRY_POINT_V06_ADDRESS,
    abi: entryPointAbi,
    op,
    paymaster,
  });

  test("the verifying paymaster's one path passes", async (t) => {
    const { op, owner } = await newAccountOperation(env, { to: TARGET, value: 0n });
    const sponsored = await sponsor(op, await sponsorship(env));
    passes(t, "v0.6 verifying", await check(bundle(await signByAccountV06(env, sponsored, owner), env.paymaster)));
  });

  test("the token paymaster's paths pass: the signed rate and the oracle", async (t) => {
    for (const oracle of [false, true]) {
      const { op, owner } = await newAccountOperation(env, { to: TARGET, value: 0n });
      await mintTestTokens(env.clients(anvilKeys.owner), op.sender, 100n * 10n ** 6n);
      const now = await latestTimestamp(env);
      const terms: TokenFeeTerms = {
        priceSource: oracle ? PRICE_SOURCE.oracle : PRICE_SOURCE.exchangeRate,
        validUntil: now + 300,
        validAfter: 0,
        feeToken: LOCAL_TEST_TOKEN_ADDRESS,
        oracleAggregator: oracle ? LOCAL_PRICE_AGGREGATOR_ADDRESS : zeroAddress,
        exchangeRate: oracle ? 0n : 3_000n * 10n ** 6n,
        priceMarkup: 1_100_000,
      };
      const context = { ...terms, chainId: env.anvil.chainId, paymaster: LOCAL_TOKEN_PAYMASTER_ADDRESS };
      const signature = await env.serviceSigner.signHash(getTokenPaymasterHash(op, context));
      const paid = { ...op, paymasterAndData: encodeTokenPaymasterAndData({ ...context, signature }) };
      const report = await check(bundle(await signByAccountV06(env, paid, owner), LOCAL_TOKEN_PAYMASTER_ADDRESS));
      passes(t, `v0.6 token, ${oracle ? "oracle" : "signed rate"}`, report);
    }
  });
});

describe("EntryPoint v0.7: VerifyingPaymasterV07", () => {
  let env: SponsoredV07;
  before(async () => {
    env = await startSponsoredChainV07("0.7");
    const funding = env.wallet(anvilKeys.fundingWallet);
    const hash = await funding.writeContract({
      address: env.paymaster,
      abi: verifyingPaymasterV07Artifact.abi,
      functionName: "depositFor",
      args: [funding.account.address],
      value: DAPP_DEPOSIT,
    });
    await env.publicClient.waitForTransactionReceipt({ hash });
    await stake(env, env.paymaster);
  });
  after(() => env?.anvil.stop());

  test("its one path passes", async (t) => {
    const draft = await newAccountOperationV07(env, { to: TARGET, value: 0n });
    const sponsored = await sponsorV07(draft.op, {
      ...(await sponsorship(env)),
      paymasterVerificationGasLimit: gasLimitsV07.paymasterVerificationGasLimit,
      paymasterPostOpGasLimit: gasLimitsV07.paymasterPostOpGasLimit,
    });
    const op = await signByAccountV07(env, sponsored, draft.owner);
    passes(
      t,
      "v0.7 verifying",
      await check({ env, entryPoint: env.entryPoint, abi: entryPointV07Abi, op, paymaster: env.paymaster }),
    );
  });
});

describe("EntryPoint v0.7: TokenPaymasterV07", () => {
  let env: TokenChainV07;
  before(async () => {
    env = await startTokenChainV07("0.7");
    await stake(env, env.paymaster);
  });
  after(() => env?.anvil.stop());

  test("its paths pass: the signed rate and the oracle", async (t) => {
    for (const oracle of [false, true]) {
      const account = await newAccount(env, 100n * 10n ** 6n);
      const draft = await draftTokenOperation(env, account, [approveCall(env, maxUint256)]);
      const terms = await quote(
        env,
        draft,
        oracle ? { priceSource: PRICE_SOURCE.oracle, oracleAggregator: env.aggregator } : {},
      );
      const op = await signByAccountV07(env, await signByService(env, draft.op, terms), account.owner);
      const report = await check({
        env,
        entryPoint: env.entryPoint,
        abi: entryPointV07Abi,
        op,
        paymaster: env.paymaster,
      });
      passes(t, `v0.7 token, ${oracle ? "oracle" : "signed rate"}`, report);
      if (!oracle) continue;
      // Judged as unstaked, the same validation breaks the storage rules: its own signer set and price age, and the
      // aggregator's answer, are a staked entity's to read, and so is the balance of a sender only being deployed.
      const asUnstaked = await check(
        { env, entryPoint: env.entryPoint, abi: entryPointV07Abi, op, paymaster: env.paymaster },
        true,
      );
      const whose = asUnstaked.violations.map(({ address }) => address).sort();
      const expected = [env.paymaster, env.paymaster, env.token, env.aggregator, env.aggregator, env.aggregator];
      assert.deepEqual(whose, expected.sort());
    }
  });
});

describe("EntryPoint v0.9: VerifyingPaymasterV09", () => {
  const { env } = permitPaymasterPaths("0.9");

  test("its two paths pass: signed apart (parallel) and in paymasterData (sequential)", async (t) => {
    const owner = privateKeyToAccount(anvilKeys.owner).address;
    const { verifying } = await deployCreate2Batch(env().clients(anvilKeys.owner), {
      verifying: paymasterDeployment("VerifyingPaymasterV09", verifyingPaymasterV09Artifact, {
        entryPoint: env().entryPoint,
        owner,
      }),
    });
    const paymaster = verifying.address;
    const contract = { address: paymaster, abi: verifyingPaymasterV09Artifact.abi } as const;
    const funding = env().wallet(anvilKeys.fundingWallet);
    for (const hash of [
      await env()
        .wallet(anvilKeys.owner)
        .writeContract({ ...contract, functionName: "addSigner", args: [env().serviceSigner.address] }),
      await funding.writeContract({
        ...contract,
        functionName: "depositFor",
        args: [funding.account.address],
        value: DAPP_DEPOSIT,
      }),
    ]) {
      await env().publicClient.waitForTransactionReceipt({ hash });
    }
    await stake(env(), paymaster);

    for (const parallel of [true, false]) {
      const sender = await erc1271Sender(env(), 0n);
      const draft = await draftOperation(env(), sender, executeCall(TARGET));
      const terms = {
        paymaster,
        paymasterId: funding.account.address,
        validUntil: (await latestTimestamp(env())) + 300,
        validAfter: 0,
        chainId: env().anvil.chainId,
        paymasterVerificationGasLimit: draft.limits.paymasterVerificationGasLimit,
        paymasterPostOpGasLimit: draft.limits.paymasterPostOpGasLimit,
      };
      let op: PackedUserOperation;
      if (parallel) {
        // paymasterData with no signature inside, then v0.9's suffix: the placeholder while the account signs.
        const data = packPaymasterAndData(
          paymaster,
          terms,
          encodeAbiParameters(verifyingDataParameters, [terms.paymasterId, terms.validUntil, terms.validAfter, "0x"]),
        );
        const signed = await signByAccount(env(), sender, {
          ...draft.op,
          paymasterAndData: concat([data, paymasterSignatureSuffix(PAYMASTER_SIGNATURE_PLACEHOLDER)]),
        });
        const apart = await env().serviceSigner.signHash(await userOpHashOf(env(), signed));
        op = { ...signed, paymasterAndData: concat([data, paymasterSignatureSuffix(apart)]) };
      } else {
        const signature = await env().serviceSigner.signHash(getVerifyingPaymasterHashV07(draft.op, terms));
        op = await signByAccount(env(), sender, {
          ...draft.op,
          paymasterAndData: encodeVerifyingPaymasterAndDataV07({ ...terms, signature }),
        });
      }
      const report = await check({ env: env(), entryPoint: env().entryPoint, abi: entryPointV07Abi, op, paymaster });
      passes(t, `v0.9 verifying, ${parallel ? "parallel" : "sequential"}`, report);
    }
  });
});
