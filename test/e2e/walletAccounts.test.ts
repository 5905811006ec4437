// The smart accounts people use, as a new user builds them, on the service's local chain: permissionless's
// toSafeSmartAccount, toKernelSmartAccount and toNexusSmartAccount, and viem's toCoinbaseSmartAccount, each with no
// factory or module address given (the client's defaults, which only work because the local chain deployed the
// families there: src/devChain/accountFamilies.ts). Each sends its first operation (which deploys the account and calls
// a whitelisted contract) through viem's bundler client and Alto, paid by our paymaster through ERC-7677
// (pm_getPaymasterStubData, then pm_getPaymasterData). Checked on chain: the account's code, a successful
// UserOperationEvent of the family's EntryPoint paid by our paymaster, and the service's record of it. The dApp
// whitelists one contract, so each account's calls are read through its callData layout: a call elsewhere is refused
// at the stub. A Safe's batch is refused whatever its calls: permissionless sends it as a delegatecall to
// MultiSendCallOnly, and the service sponsors no Safe delegatecall.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { toKernelSmartAccount, toNexusSmartAccount, toSafeSmartAccount } from "permissionless/accounts";
import { type Address, type Hex, isAddressEqual, parseEther, parseEventLogs } from "viem";
import {
  entryPoint06Abi,
  entryPoint07Abi,
  type SmartAccount,
  toCoinbaseSmartAccount,
  type UserOperationReceipt,
} from "viem/account-abstraction";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { ACCOUNT_FAMILIES } from "../../src/devChain/accountFamilies";
import { listSponsorships } from "../../src/storage/sponsorships";
import { bundlerFor, type Sent } from "../helpers/altoStack";
import { altoStackFile } from "../helpers/altoStackFile";
import { chainDapp, TARGET } from "../helpers/chainApp";
import { notWhitelistedAtStub, paymasterRefusal } from "../helpers/paymasterRefusal";

const DEPOSIT = parseEther("1");
/** Not whitelisted: a call to it is refused by the contract rule. */
const STRANGER: Address = "0x3333333333333333333333333333333333333333";

// Wallet deployment allowed and TARGET the one whitelisted contract.
const { started, dapp, endpoint } = altoStackFile(
  { entryPoints: ["0.6", "0.7"], deposits: { versions: ["0.6", "0.7"], value: DEPOSIT } },
  chainDapp,
);

type Version = "0.6" | "0.7";

function paymasterOf(version: Version): Address {
  const { info } = started().env.chain;
  return version === "0.6" ? info.verifyingPaymaster : info.entryPoints["0.7"].verifyingPaymaster;
}

function entryPointOf(version: Version): Address {
  const { info } = started().env.chain;
  return version === "0.6" ? info.entryPoint : info.entryPoints["0.7"].entryPoint;
}

/** Sends the account's first operation (deploy + one call to TARGET) and checks what the chain and the service hold. */
async function firstOperationMined(account: SmartAccount, version: Version): Promise<UserOperationReceipt> {
  const { env, t } = started();
  assert.equal(await env.publicClient.getCode({ address: account.address }), undefined, "a new account");
  const sent: Sent = [];
  const bundler = bundlerFor(started(), endpoint(), account, sent);
  const hash = await bundler.sendUserOperation({ calls: [{ to: TARGET, value: 0n, data: "0x" as Hex }] });
  const receipt = await bundler.waitForUserOperationReceipt({ hash, timeout: 30_000 });

  assert.deepEqual(
    sent.map((r) => r.method),
    ["pm_getPaymasterStubData", "pm_getPaymasterData"],
  );
  assert.equal(String(sent[1]?.params[1]).toLowerCase(), entryPointOf(version).toLowerCase());
  assert.equal(receipt.success, true, "UserOperationEvent.success");
  assert.ok(receipt.paymaster && isAddressEqual(receipt.paymaster, paymasterOf(version)), "our paymaster paid");
  const abi = version === "0.6" ? entryPoint06Abi : entryPoint07Abi;
  const [event, ...others] = parseEventLogs({
    abi,
    logs: receipt.receipt.logs,
    eventName: "UserOperationEvent",
  }).filter((e) => isAddressEqual(e.args.sender, account.address));
  assert.ok(event && others.length === 0, "one UserOperationEvent for the account");
  assert.ok(isAddressEqual(event.address, entryPointOf(version)), "emitted by the family's EntryPoint");
  assert.equal(event.args.userOpHash, hash);
  const code = await env.publicClient.getCode({ address: account.address });
  assert.ok(code && code !== "0x", "the operation deployed the account");
  const [record, ...more] = (await listSponsorships(t.db, dapp().paymasterId)).filter(
    (r) => r.user_op_hash?.toLowerCase() === hash.toLowerCase(),
  );
  assert.ok(record && more.length === 0, "one sponsorship record under the EntryPoint's userOpHash");
  assert.equal(record.sponsored, true);
  assert.equal(record.sender.toLowerCase(), account.address.toLowerCase());
  return receipt;
}

const owner = () => privateKeyToAccount(generatePrivateKey());

describe("the accounts people use, sponsored through Alto on the local chain", () => {
  test("the local chain deployed every family", async () => {
    const { env } = started();
    const names = ACCOUNT_FAMILIES.map((family) => family.name);
    assert.deepEqual(names, [
      "Safe 1.4.1 with Safe4337Module 0.3.0",
      "Kernel 0.3.0 and 0.3.1 with ECDSAValidator",
      "Nexus 1.0 with K1Validator",
      "Coinbase Smart Wallet 1",
    ]);
    for (const { address, name } of ACCOUNT_FAMILIES.flatMap((family) => family.data.deployments)) {
      const code = await env.publicClient.getCode({ address });
      assert.ok(code && code !== "0x", `${name} has code at ${address}`);
    }
  });

  test("a Safe 1.4.1 (permissionless toSafeSmartAccount, EntryPoint v0.7) is deployed and mined", async (tc) => {
    const account = await toSafeSmartAccount({
      client: started().env.publicClient,
      owners: [owner()],
      version: "1.4.1",
      entryPoint: { address: entryPointOf("0.7"), version: "0.7" },
    });
    const receipt = await firstOperationMined(account, "0.7");
    tc.diagnostic(`actualGasUsed ${receipt.actualGasUsed}`);
  });

  test("a Kernel 0.3.1 (permissionless toKernelSmartAccount, EntryPoint v0.7) is deployed and mined", async (tc) => {
    const account = await toKernelSmartAccount({
      client: started().env.publicClient,
      owners: [owner()],
      version: "0.3.1",
      entryPoint: { address: entryPointOf("0.7"), version: "0.7" },
    });
    const receipt = await firstOperationMined(account, "0.7");
    tc.diagnostic(`actualGasUsed ${receipt.actualGasUsed}`);
  });

  test("a Kernel of permissionless's default version (0.3.0-beta, no version given) is deployed and mined", async () => {
    const account = await toKernelSmartAccount({
      client: started().env.publicClient,
      owners: [owner()],
      entryPoint: { address: entryPointOf("0.7"), version: "0.7" },
    });
    await firstOperationMined(account, "0.7");
  });

  test("a Nexus 1.0 (permissionless toNexusSmartAccount, EntryPoint v0.7) is deployed and mined", async (tc) => {
    const account = await toNexusSmartAccount({
      client: started().env.publicClient,
      owners: [owner()],
      version: "1.0.0",
    });
    const receipt = await firstOperationMined(account, "0.7");
    tc.diagnostic(`actualGasUsed ${receipt.actualGasUsed}`);
  });

  test("a Coinbase Smart Wallet 1 (viem toCoinbaseSmartAccount, EntryPoint v0.6) is deployed and mined", async (tc) => {
    const account = await toCoinbaseSmartAccount({
      client: started().env.publicClient,
      owners: [owner()],
      version: "1",
    });
    const receipt = await firstOperationMined(account, "0.6");
    tc.diagnostic(`actualGasUsed ${receipt.actualGasUsed}`);
  });
});

describe("each account's calls are read through its layout", () => {
  const builders = {
    "Safe 1.4.1": () => toSafeSmartAccount({ client: started().env.publicClient, owners: [owner()], version: "1.4.1" }),
    "Kernel 0.3.1": () =>
      toKernelSmartAccount({
        client: started().env.publicClient,
        owners: [owner()],
        version: "0.3.1",
        entryPoint: { address: entryPointOf("0.7"), version: "0.7" },
      }),
    "Nexus 1.0": () => toNexusSmartAccount({ client: started().env.publicClient, owners: [owner()], version: "1.0.0" }),
    "Coinbase Smart Wallet 1": () =>
      toCoinbaseSmartAccount({ client: started().env.publicClient, owners: [owner()], version: "1" }),
  } as const;

  /** What permissionless's Safe sends for a batch: a delegatecall to MultiSendCallOnly, refused whatever its calls. */
  const batchOf = (name: string) => (name === "Safe 1.4.1" ? [] : [{ to: TARGET, value: 0n }]);

  for (const [name, build] of Object.entries(builders)) {
    test(`${name}: a call to a contract that is not whitelisted is refused at the stub, with our reason`, async () => {
      const account = await build();
      const sent: Sent = [];
      const bundler = bundlerFor(started(), endpoint(), account, sent);
      const calls = [...batchOf(name), { to: STRANGER, value: 0n }];
      await notWhitelistedAtStub(bundler.sendUserOperation({ calls }), endpoint(), sent, STRANGER);
    });
  }
});

test("a Safe's batch, which permissionless sends as a delegatecall to MultiSendCallOnly, is refused as a delegatecall", async () => {
  const account = await toSafeSmartAccount({ client: started().env.publicClient, owners: [owner()], version: "1.4.1" });
  const calls = [
    { to: TARGET, value: 0n },
    { to: TARGET, value: 0n },
  ];
  await paymasterRefusal(
    bundlerFor(started(), endpoint(), account).sendUserOperation({ calls }),
    endpoint(),
    -32003,
    "Not sponsored: Smart contract data not found: Safe delegatecall operations are never sponsored",
  );
});
