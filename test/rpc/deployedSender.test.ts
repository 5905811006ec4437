// Whether an operation deploys its account is the sender's code on chain, not the factory it names: on the service's
// local chain (real EntryPoints v0.6, v0.7 and v0.9, their SimpleAccountFactory, our paymasters), an account not
// deployed yet that names its factory is sponsored as a deployment under the WALLET_DEPLOYMENT rule; the same account
// once deployed, still naming the factory, is refused by the wallet-deployment rule at the stub and at the data step,
// with or without that rule; without a factory it is an ordinary sponsored call; and a node that cannot answer refuses
// rather than guess. v0.9 is the version where this matters most: it skips the factory of an account that has code
// and runs the call (v0.6 to v0.8 fail it with AA10), so only the code read keeps that call from passing as a
// deployment. On v0.8 an EIP-7702 authorization deploys, unless the EOA is already delegated to that account.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  type Address,
  createWalletClient,
  encodeFunctionData,
  type Hex,
  http,
  parseAbi,
  parseEther,
  toHex,
} from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { ENTRY_POINT_V06_ADDRESS } from "../../src/bindings/entryPoints/entryPoint";
import type { ChainConfig } from "../../src/config";
import { simpleAccountAbi, simpleAccountFactoryAbi } from "../../src/devChain/simpleAccount";
import { listSponsorships } from "../../src/storage/sponsorships";
import { anvilKeys } from "../contracts/fixtures";
import { confirm } from "../contracts/v07/localStacks";
import { type Dapp, startTestApp } from "../helpers/app";
import { chainDapp, TARGET } from "../helpers/chainApp";
import { fundedDapp, rpc } from "../helpers/dappSetup";
import { freshAccount } from "../helpers/freshAccount";
import { stacksAppFile } from "../helpers/stacksAppFile";
import { ESTIMATED_GAS, userOpV07 } from "../helpers/userOps";

const CHAIN_ID = 31337;
const context = { sponsorshipInfo: { smartAccountInfo: { name: "INFINITISM", version: "1.0.0" } } };
const callTarget = encodeFunctionData({ abi: simpleAccountAbi, functionName: "execute", args: [TARGET, 0n, "0x"] });

/** Has the WALLET_DEPLOYMENT rule and TARGET whitelisted. */
let withDeploymentRule: Dapp;
/** Has TARGET whitelisted only. */
let withoutDeploymentRule: Dapp;
const { env, t } = stacksAppFile({ deposits: ["0.6", "0.7", "0.8", "0.9"] }, async ({ t }) => {
  withDeploymentRule = await chainDapp(t);
  withoutDeploymentRule = await fundedDapp(t, {
    fundingKey: anvilKeys.fundingWallet,
    contract: { address: TARGET },
    dapp: { name: "no deployment rule" },
  });
});

/** One version's factory, EntryPoint and operation shape, as a wallet sends it to the ERC-7677 methods. */
interface VersionCase {
  version: "0.6" | "0.7" | "0.9";
  entryPoint: () => Address;
  factory: () => Address;
  /** The factory deploys only when called by the EntryPoint's SenderCreator (v0.8 and later). */
  factoryCallerIsSenderCreator: boolean;
  /** The operation of a fresh account's owner; `withFactory` names the factory and its call. */
  operation(sender: Address, factoryData: Hex, withFactory: boolean): Record<string, unknown>;
}

/**
 * v0.7 and v0.9 take the same packed operation (factory and factoryData apart from the call), so one shape serves
 * both; only the EntryPoint and its factory differ.
 */
function packedVersion(version: "0.7" | "0.9"): VersionCase {
  const stack = () => env().chain.info.entryPoints[version];
  return {
    version,
    entryPoint: () => stack().entryPoint,
    factory: () => stack().simpleAccountFactory,
    factoryCallerIsSenderCreator: version === "0.9",
    operation: (sender, factoryData, withFactory) =>
      userOpV07(sender, 0, {
        callData: callTarget,
        ...(withFactory ? { factory: stack().simpleAccountFactory, factoryData } : {}),
      }),
  };
}

const versions: VersionCase[] = [
  {
    version: "0.6",
    entryPoint: () => ENTRY_POINT_V06_ADDRESS,
    factory: () => env().chain.info.simpleAccountFactory,
    factoryCallerIsSenderCreator: false,
    operation: (sender, factoryData, withFactory) => ({
      sender,
      nonce: "0x0",
      initCode: withFactory ? `${env().chain.info.simpleAccountFactory}${factoryData.slice(2)}` : "0x",
      callData: callTarget,
      ...ESTIMATED_GAS,
    }),
  },
  packedVersion("0.7"),
  packedVersion("0.9"),
];

/** EntryPoint v0.8 and later name the contract through which they call factories. */
const senderCreatorAbi = parseAbi(["function senderCreator() view returns (address)"]);

/**
 * Deploys the account outside any operation, as a wallet that was set up elsewhere would find it. From v0.8 the
 * SimpleAccountFactory takes createAccount only from its EntryPoint's SenderCreator (NotSenderCreator otherwise), so
 * there the same call is sent as the SenderCreator (anvil impersonates it, and funds its gas: it holds nothing).
 */
async function deployDirectly(version: VersionCase, owner: Address, sender: Address): Promise<void> {
  const call = {
    address: version.factory(),
    abi: simpleAccountFactoryAbi,
    functionName: "createAccount",
    args: [owner, 0n],
  } as const;
  if (version.factoryCallerIsSenderCreator) {
    const senderCreator = await env().publicClient.readContract({
      address: version.entryPoint(),
      abi: senderCreatorAbi,
      functionName: "senderCreator",
    });
    const anvil = env().publicClient.request as unknown as (args: {
      method: string;
      params: unknown[];
    }) => Promise<void>;
    await anvil({ method: "anvil_setBalance", params: [senderCreator, toHex(parseEther("1"))] });
    await anvil({ method: "anvil_impersonateAccount", params: [senderCreator] });
    try {
      const asSenderCreator = createWalletClient({
        account: senderCreator,
        chain: env().viemChain,
        transport: http(env().chain.rpcUrl),
      });
      await confirm(env(), asSenderCreator.writeContract(call));
    } finally {
      await anvil({ method: "anvil_stopImpersonatingAccount", params: [senderCreator] });
    }
  } else {
    await confirm(env(), env().wallet(anvilKeys.stranger).writeContract(call));
  }
  const code = await env().publicClient.getCode({ address: sender });
  assert.ok(code && code !== "0x", "the account has code now");
}

const ask = (dapp: Dapp, method: string, op: Record<string, unknown>, entryPoint: Address) =>
  rpc(t(), dapp, method, [op, entryPoint, toHex(CHAIN_ID), context]);

/** The rule outcomes the service recorded for the sender's latest request. */
async function recordedOutcomes(dapp: Dapp, sender: Address) {
  const records = await listSponsorships(t().ctx.db, dapp.paymasterId);
  const latest = records.filter((record) => record.sender.toLowerCase() === sender.toLowerCase()).at(-1);
  assert.ok(latest, `a record for ${sender}`);
  return latest;
}

const alreadyDeployed = (sender: Address, what: string) =>
  `Not sponsored: The sender ${sender.toLowerCase()} is already deployed (it has code), yet the operation has ${what}: ` +
  "remove it, as nothing would be deployed";

for (const version of versions) {
  describe(`EntryPoint v${version.version}`, () => {
    const what = version.version === "0.6" ? "initCode" : "a factory";

    test("an account not deployed yet, naming its factory: a deployment, sponsored under the rule", async () => {
      const { sender, factoryData } = await freshAccount(env().publicClient, version.factory());
      const op = version.operation(sender, factoryData, true);
      const stub = await ask(withDeploymentRule, "pm_getPaymasterStubData", op, version.entryPoint());
      assert.equal(stub.status, 200, JSON.stringify(stub.body));
      const data = await ask(withDeploymentRule, "pm_getPaymasterData", op, version.entryPoint());
      assert.equal(data.status, 200, JSON.stringify(data.body));
      const record = await recordedOutcomes(withDeploymentRule, sender);
      assert.equal(record.sponsored, true);
      assert.deepEqual(
        record.rule_outcomes.find((outcome) => outcome.rule === "walletDeployment"),
        { rule: "walletDeployment", passed: true },
      );
    });

    test("the same without the rule: refused as a deployment that is not sponsored", async () => {
      const { sender, factoryData } = await freshAccount(env().publicClient, version.factory());
      const reply = await ask(
        withoutDeploymentRule,
        "pm_getPaymasterData",
        version.operation(sender, factoryData, true),
        version.entryPoint(),
      );
      assert.equal(reply.status, 400);
      assert.equal(
        reply.body.error.message,
        `Not sponsored: Wallet deployment is not sponsored: the operation has ${what} and no active ` +
          "WALLET_DEPLOYMENT policy",
      );
    });

    test("a deployed account that still names its factory: refused by the wallet-deployment rule", async () => {
      const { sender, factoryData, owner } = await freshAccount(env().publicClient, version.factory());
      await deployDirectly(version, owner, sender);
      const op = version.operation(sender, factoryData, true);
      for (const dapp of [withDeploymentRule, withoutDeploymentRule]) {
        for (const method of ["pm_getPaymasterStubData", "pm_getPaymasterData"]) {
          const reply = await ask(dapp, method, op, version.entryPoint());
          assert.equal(reply.status, 400, `${method}: ${JSON.stringify(reply.body)}`);
          assert.equal(reply.body.error.code, -32003);
          assert.equal(reply.body.error.message, alreadyDeployed(sender, what), method);
        }
      }
      const record = await recordedOutcomes(withoutDeploymentRule, sender);
      assert.equal(record.sponsored, false);
      assert.equal(record.rule_outcomes.at(-1)?.rule, "walletDeployment");
    });

    test("a deployed account without a factory: an ordinary call, sponsored", async () => {
      const { sender, factoryData, owner } = await freshAccount(env().publicClient, version.factory());
      await deployDirectly(version, owner, sender);
      const reply = await ask(
        withoutDeploymentRule,
        "pm_getPaymasterData",
        version.operation(sender, factoryData, false),
        version.entryPoint(),
      );
      assert.equal(reply.status, 200, JSON.stringify(reply.body));
      assert.equal((await recordedOutcomes(withoutDeploymentRule, sender)).sponsored, true);
    });
  });
}

test("v0.9 parallel signing: the commit step refuses a deployed account that still names its factory", async () => {
  // Commit is where parallel signing decides and signs, so the wallet-deployment rule must hold there as it does for
  // sequential signing.
  const v09 = versions.find((version) => version.version === "0.9");
  assert.ok(v09);
  const { sender, factoryData, owner } = await freshAccount(env().publicClient, v09.factory());
  await deployDirectly(v09, owner, sender);
  const reply = await rpc(t(), withDeploymentRule, "pm_getPaymasterData", [
    v09.operation(sender, factoryData, true),
    v09.entryPoint(),
    toHex(CHAIN_ID),
    { signingPhase: "commit" },
  ]);
  assert.equal(reply.status, 400, JSON.stringify(reply.body));
  assert.equal(reply.body.error.code, -32003);
  assert.equal(reply.body.error.message, alreadyDeployed(sender, "a factory"));
});

test("a node that does not answer: an operation naming a factory is refused, never guessed", async () => {
  // Port 9 (discard) refuses connections on this machine: the code cannot be read.
  const dead: ChainConfig = { chainId: CHAIN_ID, name: "local", rpcUrl: "http://127.0.0.1:9" };
  const other = await startTestApp({ signer: env().serviceSigner, chains: new Map([[CHAIN_ID, dead]]) });
  try {
    const dapp = await chainDapp(other);
    const { sender, factoryData } = await freshAccount(env().publicClient, env().chain.info.simpleAccountFactory);
    const reply = await rpc(other, dapp, "pm_getPaymasterStubData", [
      versions[0]?.operation(sender, factoryData, true),
      ENTRY_POINT_V06_ADDRESS,
      toHex(CHAIN_ID),
      context,
    ]);
    assert.equal(reply.status, 400, JSON.stringify(reply.body));
    assert.match(
      reply.body.error.message,
      new RegExp(
        `^Not sponsored: Could not read whether the sender ${sender.toLowerCase()} is deployed, which decides ` +
          "whether initCode deploys it: ",
      ),
    );
  } finally {
    await other.close();
  }
});

describe("EntryPoint v0.8, EIP-7702: an authorization deploys unless the EOA already has that delegate", () => {
  const delegate = () => env().chain.info.entryPoints["0.8"].simple7702Account as Address;
  /** An authorization as wallets send it; the service does not check its signature (the chain does). */
  const operation = (sender: Address) =>
    userOpV07(sender, 0, {
      callData: callTarget,
      factory: "0x7702",
      eip7702Auth: {
        chainId: toHex(CHAIN_ID),
        address: delegate(),
        nonce: "0x0",
        yParity: "0x1",
        r: `0x${"11".repeat(32)}`,
        s: `0x${"22".repeat(32)}`,
      },
    });
  const entryPoint = () => env().chain.info.entryPoints["0.8"].entryPoint;

  test("an EOA without code: the authorization is its deployment, refused without the rule", async () => {
    const sender = privateKeyToAccount(generatePrivateKey()).address;
    const reply = await ask(withoutDeploymentRule, "pm_getPaymasterData", operation(sender), entryPoint());
    assert.equal(reply.status, 400, JSON.stringify(reply.body));
    assert.equal(
      reply.body.error.message,
      "Not sponsored: Wallet deployment is not sponsored: the operation has an EIP-7702 authorization and no " +
        "active WALLET_DEPLOYMENT policy",
    );
  });

  test("an EOA already delegated to the same account: no deployment, sponsored without the rule", async () => {
    const sender = privateKeyToAccount(generatePrivateKey()).address;
    // The code an EIP-7702 delegation leaves on the EOA, set directly (anvil's cheat) rather than by a type-4 transaction.
    await env().publicClient.request({
      method: "anvil_setCode" as never,
      params: [sender, `0xef0100${delegate().slice(2).toLowerCase()}`] as never,
    });
    const reply = await ask(withoutDeploymentRule, "pm_getPaymasterData", operation(sender), entryPoint());
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    const record = await recordedOutcomes(withoutDeploymentRule, sender);
    assert.deepEqual(
      record.rule_outcomes.find((outcome) => outcome.rule === "walletDeployment"),
      {
        rule: "walletDeployment",
        passed: true,
        reason: `the sender is already delegated to ${delegate().toLowerCase()}`,
      },
    );
  });
});
