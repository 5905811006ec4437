// permissionless 0.4 against the service and the Alto bundler on the local chain (EntryPoint v0.6): a SimpleAccount
// made by `toSimpleSmartAccount`, sent by `createSmartAccountClient`, whose paymaster is a pimlico client on our
// endpoint. Gas is estimated by the bundler over our ERC-7677 stub, then the pimlico client's `sponsorUserOperation`
// asks for the signature with `[userOp, entryPoint, context]` (or `[userOp, entryPoint]` without a context).
//
// Shown here: a SimpleAccount `executeBatch` (the first operation, which also deploys the account) is sponsored and
// mined whether the context names the account or not; and a refused operation reaches the permissionless caller as an
// error carrying our reason, where a `0x` answer would have been sent on unpaid and failed at the bundler with AA21.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createSmartAccountClient } from "permissionless";
import { toSimpleSmartAccount } from "permissionless/accounts";
import { createPimlicoClient } from "permissionless/clients/pimlico";
import { type Address, encodeFunctionData, type Hex, http } from "viem";
import { entryPoint06Address, type GetPaymasterDataParameters } from "viem/account-abstraction";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { simpleAccountFactoryArtifact } from "../../src/bindings/paymasters/artifacts";
import { simpleAccountFactoryDeployment } from "../../src/devChain/deployments";
import { simpleAccountFactoryAbi } from "../../src/devChain/simpleAccount";
import { anvilKeys } from "../contracts/fixtures";
import { type Alto, startAlto } from "../helpers/alto";
import type { Dapp } from "../helpers/app";
import { type ChainApp, chainDapp, deposit, INFINITISM, ONE_ETHER, startChainApp, TARGET } from "../helpers/chainApp";
import { whitelist } from "../helpers/dappSetup";
import { paymasterRefusal } from "../helpers/paymasterRefusal";

const CHAIN_ID = 31337;
const ENTRY_POINT = { address: entryPoint06Address, version: "0.6" } as const;
const factory = simpleAccountFactoryDeployment.address;
/** Not whitelisted: a call to it is refused by the contract rule. */
const STRANGER: Address = "0x3333333333333333333333333333333333333333";
const NAMING_THE_ACCOUNT = { sponsorshipInfo: { smartAccountInfo: INFINITISM } };

let app: ChainApp | undefined;
let alto: Alto | undefined;
let dapp: Dapp;
let endpoint: string;

before(async () => {
  app = await startChainApp();
  dapp = await chainDapp(app.t);
  // The batch's first call makes another account through the factory: a call whose effect the test can see.
  await whitelist(app.t, dapp, factory, simpleAccountFactoryArtifact.abi, ["createAccount"]);
  await deposit(app, ONE_ETHER);
  alto = await startAlto({
    rpcUrl: app.env.anvil.rpcUrl,
    executorKey: anvilKeys.bundler,
    utilityKey: anvilKeys.stranger,
  });
  const base = await app.t.app.listen({ port: 0, host: "127.0.0.1" });
  endpoint = `${base}/api/v1/${CHAIN_ID}/${dapp.apiKey}`;
});

after(async () => {
  try {
    await alto?.stop();
  } finally {
    await app?.close();
  }
});

function requireStarted(): { app: ChainApp; alto: Alto } {
  assert.ok(app && alto, "the chain, the service or Alto did not start");
  return { app, alto };
}

/**
 * A new SimpleAccount and a permissionless client that sends its operations through Alto, paid by our paymaster: the
 * ERC-7677 stub for the bundler's estimate, then pimlico's sponsorUserOperation with `context` as params[2].
 */
async function newAccountClient(context: Record<string, unknown> | undefined) {
  const started = requireStarted();
  /** The params of each pm_sponsorUserOperation request as it left the pimlico client, to show the form answered. */
  const sent: unknown[][] = [];
  const pimlico = createPimlicoClient({
    transport: http(endpoint, {
      onFetchRequest: async (request) => {
        const body = JSON.parse(await request.text()) as { method: string; params: unknown[] };
        if (body.method === "pm_sponsorUserOperation") sent.push(body.params);
      },
    }),
    entryPoint: ENTRY_POINT,
  });
  const account = await toSimpleSmartAccount({
    client: started.app.env.publicClient,
    owner: privateKeyToAccount(generatePrivateKey()),
    entryPoint: ENTRY_POINT,
  });
  const client = createSmartAccountClient({
    account,
    chain: started.app.env.chain,
    client: started.app.env.publicClient,
    bundlerTransport: http(`${started.alto.url}/v1/rpc`),
    paymasterContext: context,
    paymaster: {
      getPaymasterStubData: (parameters) => pimlico.getPaymasterStubData(parameters),
      getPaymasterData: (parameters) =>
        pimlico.sponsorUserOperation({
          userOperation: asV06Operation(parameters),
          paymasterContext: parameters.context,
        }),
    },
  });
  return { client, account, sent };
}

/**
 * The operation viem hands the paymaster, as pimlico's action takes it: EntryPoint v0.6 fields, gas estimated, and the
 * stub paymasterAndData and account signature that viem filled in (typed out of the parameters, but present).
 */
function asV06Operation(parameters: GetPaymasterDataParameters) {
  const { chainId: _, entryPointAddress: __, context: ___, ...op } = parameters;
  const { initCode, maxFeePerGas, maxPriorityFeePerGas } = op;
  const { paymasterAndData = "0x", signature = "0x" } = op as { paymasterAndData?: Hex; signature?: Hex };
  assert.ok(initCode !== undefined, "an EntryPoint v0.6 operation has initCode");
  assert.ok(maxFeePerGas !== undefined && maxPriorityFeePerGas !== undefined, "fees are chosen before the paymaster");
  return { ...op, initCode, maxFeePerGas, maxPriorityFeePerGas, paymasterAndData, signature };
}

async function hasCode(address: Address): Promise<boolean> {
  const code = await requireStarted().app.env.publicClient.getCode({ address });
  return code !== undefined && code !== "0x";
}

for (const [label, context] of [
  ["with a context naming the account", NAMING_THE_ACCOUNT],
  ["without a context", undefined],
] as const) {
  describe(`pimlico's sponsorUserOperation ${label}`, () => {
    test("a SimpleAccount executeBatch is sponsored by us and mined", async () => {
      const { client, account, sent } = await newAccountClient(context);
      const otherOwner = privateKeyToAccount(generatePrivateKey()).address;
      const created = await requireStarted().app.env.publicClient.readContract({
        address: factory,
        abi: simpleAccountFactoryAbi,
        functionName: "getAddress",
        args: [otherOwner, 0n],
      });
      const hash = await client.sendUserOperation({
        calls: [
          {
            to: factory,
            data: encodeFunctionData({
              abi: simpleAccountFactoryAbi,
              functionName: "createAccount",
              args: [otherOwner, 0n],
            }),
          },
          { to: TARGET, value: 0n },
        ],
      });
      const receipt = await client.waitForUserOperationReceipt({ hash, timeout: 30_000 });

      assert.equal(
        receipt.success,
        true,
        JSON.stringify(receipt, (_k, v) => (typeof v === "bigint" ? `${v}` : v)),
      );
      assert.equal(receipt.paymaster?.toLowerCase(), requireStarted().app.env.paymaster.toLowerCase());
      assert.equal(await hasCode(account.address), true, "the account was deployed");
      assert.equal(await hasCode(created), true, "the batch's first call ran");
      assert.equal(sent.length, 1);
      const [op, entryPoint, ...rest] = sent[0] ?? [];
      assert.equal((op as { callData: Hex }).callData.slice(0, 10), "0x18dfb3c7", "executeBatch(address[],bytes[])");
      assert.equal(entryPoint, entryPoint06Address);
      assert.deepEqual(rest, context === undefined ? [] : [context]);
    });

    test("a refused operation reaches the caller as an error with our reason, not the bundler's AA21", async () => {
      const { client, account } = await newAccountClient(context);
      const refusal = await paymasterRefusal(
        client.sendUserOperation({ calls: [{ to: STRANGER, value: 0n }, { to: TARGET }] }),
        endpoint,
        -32003,
        `Not sponsored: Smart contract data not found: ${STRANGER} is not a whitelisted contract`,
      );
      assert.doesNotMatch(refusal.message, /AA21/);
      assert.equal(await hasCode(account.address), false, "nothing was sent on chain");
    });
  });
}
