// ERC-7677 (viem's createPaymasterClient) against the service over real HTTP and the real EntryPoint on anvil: the stub
// has the final length, the signed data runs in handleOps, and refusals and bad params are errors naming the problem.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { http, parseEventLogs, size, toHex } from "viem";
import { createPaymasterClient, type PaymasterClient } from "viem/account-abstraction";
import { ENTRY_POINT_V06_ADDRESS, entryPointAbi } from "../../src/bindings/entryPoints/entryPoint";
import { decodeVerifyingPaymasterAndData } from "../../src/bindings/paymasters/paymasterAndData";
import { toRpcUserOperation } from "../../src/gasEstimation/gasEstimationBundler";
import { NO_FUNDING_WALLET_REASON } from "../../src/sponsorship/rules/fundingAndRules";
import { handleOps, signByAccount } from "../contracts/fixtures";
import type { Dapp } from "../helpers/app";
import {
  type ChainApp,
  chainDapp,
  deposit,
  freshOperation,
  INFINITISM,
  ONE_ETHER,
  startChainApp,
} from "../helpers/chainApp";
import { rpc } from "../helpers/dappSetup";

const CHAIN_ID = 31337;
const context = { sponsorshipInfo: { smartAccountInfo: INFINITISM } };

let app: ChainApp;
let dapp: Dapp;
let paymasterClient: PaymasterClient;

before(async () => {
  app = await startChainApp();
  dapp = await chainDapp(app.t);
  await deposit(app, ONE_ETHER);
  const base = await app.t.app.listen({ port: 0, host: "127.0.0.1" });
  paymasterClient = createPaymasterClient({ transport: http(`${base}/api/v1/${CHAIN_ID}/${dapp.apiKey}`) });
});
after(() => app?.close());

test("viem's paymaster client: a stub of the final length, then signed data that handleOps runs with success", async () => {
  const { op, owner } = await freshOperation(app);
  const { paymasterAndData: _, signature: __, ...fields } = op;
  const stub = await paymasterClient.getPaymasterStubData({
    sender: op.sender,
    nonce: op.nonce,
    initCode: op.initCode,
    callData: op.callData,
    maxFeePerGas: op.maxFeePerGas,
    maxPriorityFeePerGas: op.maxPriorityFeePerGas,
    chainId: CHAIN_ID,
    entryPointAddress: ENTRY_POINT_V06_ADDRESS,
    context,
  });
  assert.equal(stub.isFinal, false);
  assert.equal(size(stub.paymasterAndData as `0x${string}`), 276);
  const stubTerms = decodeVerifyingPaymasterAndData(stub.paymasterAndData as `0x${string}`);
  assert.equal(stubTerms.paymaster.toLowerCase(), app.env.paymaster.toLowerCase());

  const data = await paymasterClient.getPaymasterData({
    ...fields,
    chainId: CHAIN_ID,
    entryPointAddress: ENTRY_POINT_V06_ADDRESS,
    context,
  });
  const paymasterAndData = data.paymasterAndData as `0x${string}`;
  assert.equal(size(paymasterAndData), size(stub.paymasterAndData as `0x${string}`), "the stub had the final length");
  const terms = decodeVerifyingPaymasterAndData(paymasterAndData);
  assert.equal(terms.paymasterId.toLowerCase(), stubTerms.paymasterId.toLowerCase(), "the stub named the same deposit");

  const signed = await signByAccount(app.env, { ...op, paymasterAndData }, owner);
  const receipt = await handleOps(app.env, [signed]);
  const [event] = parseEventLogs({ abi: entryPointAbi, logs: receipt.logs, eventName: "UserOperationEvent" });
  assert.equal(event?.args.success, true);
  assert.equal(event?.args.paymaster.toLowerCase(), app.env.paymaster.toLowerCase());
});

/** A fresh operation with every number as hex, as viem sends it to the ERC-7677 methods. */
async function wireOperation() {
  return toRpcUserOperation((await freshOperation(app)).op);
}

test("a refusal is a -32003 error with the rule's reason, since these methods have no 0x result", async () => {
  const unfunded = await app.t.dapp();
  const reply = await rpc(app.t, unfunded, "pm_getPaymasterData", [
    await wireOperation(),
    ENTRY_POINT_V06_ADDRESS,
    toHex(CHAIN_ID),
    context,
  ]);
  assert.equal(reply.status, 400);
  assert.equal(reply.body.error.code, -32003);
  assert.equal(reply.body.error.message, `Not sponsored: ${NO_FUNDING_WALLET_REASON}`);
});

test("bad params: -32602 naming the element and the problem", async () => {
  const op = await wireOperation();
  const { callGasLimit: _, ...withoutGas } = op;
  const cases: [string, unknown[], RegExp][] = [
    [
      "pm_getPaymasterStubData",
      [op, "0x0000000000000000000000000000000000000001", toHex(CHAIN_ID)],
      /^params\[1\]: EntryPoint/,
    ],
    ["pm_getPaymasterStubData", [op, ENTRY_POINT_V06_ADDRESS], /^params\[2\] is required/],
    [
      "pm_getPaymasterStubData",
      [op, ENTRY_POINT_V06_ADDRESS, "0x1"],
      /^params\[2\]: chain 1 is not this endpoint's chain 31337/,
    ],
    ["pm_getPaymasterStubData", [op, ENTRY_POINT_V06_ADDRESS, toHex(CHAIN_ID), "x"], /^params\[3\] must be an object/],
    [
      "pm_getPaymasterStubData",
      [op, ENTRY_POINT_V06_ADDRESS, toHex(CHAIN_ID), { mode: "ERC20" }],
      /^params\[3\]\.token is required in ERC20 mode: the address of the fee token that pays for the gas$/,
    ],
    [
      "pm_getPaymasterData",
      [op, ENTRY_POINT_V06_ADDRESS, toHex(CHAIN_ID), { expiryDuration: 0 }],
      /^params\[3\]\.expiryDuration must be a whole number/,
    ],
    ["pm_getPaymasterData", [withoutGas, ENTRY_POINT_V06_ADDRESS, toHex(CHAIN_ID)], /missing callGasLimit/],
  ];
  for (const [method, params, message] of cases) {
    const reply = await rpc(app.t, dapp, method, params);
    assert.equal(reply.status, 400, `${method} ${JSON.stringify(params.slice(1))}`);
    assert.equal(reply.body.error.code, -32602);
    assert.match(reply.body.error.message, message);
  }
});
