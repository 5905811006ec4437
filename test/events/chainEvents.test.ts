// The sponsorship events of operations run on a real chain: anvil with the real EntryPoint v0.6, the operations sent
// with handleOps, settlement run one pass at a time. A receiver of the test's own verifies every delivery with the
// standardwebhooks package: signed then included with the receipt's UserOperationEvent figures; a reverted execution
// gives reverted with its reason; an unused signature gives expired once its window has passed.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { encodeFunctionData, parseAbi, parseEventLogs } from "viem";
import { ENTRY_POINT_V06_ADDRESS, entryPointAbi } from "../../src/bindings/entryPoints/entryPoint";
import type { UserOperation } from "../../src/bindings/entryPoints/userOperation";
import { EXPIRY_MARGIN_SECONDS } from "../../src/chain/paymasterDeposit";
import { type Settlement, startSettlement } from "../../src/settlement/watcher";
import { anvilKeys, handleOps, newAccountOperation, signByAccount } from "../contracts/fixtures";
import type { Dapp } from "../helpers/app";
import {
  type ChainApp,
  chainDapp,
  deposit,
  freshOperation,
  ONE_ETHER,
  requestSponsorship,
  startChainApp,
  TARGET,
} from "../helpers/chainApp";
import { whitelist } from "../helpers/dappSetup";
import { eventually } from "../helpers/eventually";
import { addEndpoint } from "./helpers";
import { type EventReceiver, type ReceivedEvent, startEventReceiver } from "./receiver";

let app: ChainApp;
let dapp: Dapp;
let settlement: Settlement;
let to: EventReceiver;

before(async () => {
  app = await startChainApp();
  dapp = await chainDapp(app.t, anvilKeys.fundingWallet);
  await deposit(app, ONE_ETHER);
  settlement = startSettlement(app.t.ctx, { poll: false });
  to = await startEventReceiver(() => app.t.ctx.now());
  const endpoint = await addEndpoint(app.t, dapp, to.url, [
    "sponsorship.signed",
    "sponsorship.included",
    "sponsorship.reverted",
    "sponsorship.expired",
  ]);
  to.secrets.push(endpoint.secret);
});
after(async () => {
  await settlement?.stop();
  await to?.close();
  await app?.close();
});

/** The events the receiver accepted for one operation, in their order. */
const eventsOf = (userOpHash: string): ReceivedEvent[] =>
  to.accepted().filter((event) => event.data.userOpHash === userOpHash);

async function sponsored(
  fresh: { op: UserOperation; owner: Parameters<typeof signByAccount>[2] },
  mode: Record<string, unknown> = {},
): Promise<UserOperation> {
  const answer = await requestSponsorship(app.t, dapp, fresh.op, mode);
  assert.equal(answer.reason, undefined, `refused: ${answer.reason}`);
  return signByAccount(app.env, { ...fresh.op, paymasterAndData: answer.paymasterAndData }, fresh.owner);
}

async function run(op: UserOperation) {
  const receipt = await handleOps(app.env, [op]);
  const [event] = parseEventLogs({ abi: entryPointAbi, logs: receipt.logs, eventName: "UserOperationEvent" });
  assert.ok(event, "no UserOperationEvent");
  return { receipt, event: event.args };
}

describe("sponsorship events on a chain", () => {
  test("an operation sponsored and mined gives signed, then included with the receipt's figures", async () => {
    const op = await sponsored(await freshOperation(app));
    const { receipt, event } = await run(op);
    await settlement.settleOnce();
    const [signed, included] = await eventually(
      "signed and included",
      () => eventsOf(event.userOpHash),
      (events) => events.length >= 2,
    );
    assert.equal(signed?.type, "sponsorship.signed");
    assert.equal(included?.type, "sponsorship.included");
    assert.ok((signed?.sequence ?? 0) < (included?.sequence ?? 0));
    assert.deepEqual(
      {
        transactionHash: included?.data.transactionHash,
        blockNumber: included?.data.blockNumber,
        actualGasCost: included?.data.actualGasCost,
        actualGasUsed: included?.data.actualGasUsed,
        success: included?.data.success,
        sender: included?.data.sender,
        nonce: included?.data.nonce,
      },
      {
        transactionHash: receipt.transactionHash,
        blockNumber: Number(receipt.blockNumber),
        actualGasCost: event.actualGasCost.toString(),
        actualGasUsed: event.actualGasUsed.toString(),
        success: true,
        sender: event.sender.toLowerCase(),
        nonce: event.nonce.toString(),
      },
    );
    assert.equal(included?.data.tokenCharge, null);
    assert.ok(to.received.every((delivery) => delivery.verifiedBy.length === 1));
  });

  test("a reverted execution gives included with success false, then reverted with the reason", async () => {
    // The new account withdraws from a deposit it does not have at the EntryPoint: its execution reverts with the
    // EntryPoint's reason, and the gas is still paid.
    const withdrawTo = parseAbi(["function withdrawTo(address withdrawAddress, uint256 withdrawAmount)"]);
    await whitelist(app.t, dapp, ENTRY_POINT_V06_ADDRESS, withdrawTo, ["withdrawTo"]);
    const data = encodeFunctionData({ abi: withdrawTo, args: [TARGET, 1n] });
    const op = await sponsored(await newAccountOperation(app.env, { to: ENTRY_POINT_V06_ADDRESS, value: 0n, data }));
    const { event } = await run(op);
    assert.equal(event.success, false);
    await settlement.settleOnce();
    const events = await eventually(
      "included and reverted",
      () => eventsOf(event.userOpHash),
      (found) => found.length >= 3,
    );
    assert.deepEqual(
      events.map((found) => found.type),
      ["sponsorship.signed", "sponsorship.included", "sponsorship.reverted"],
    );
    const reverted = events[2] as ReceivedEvent;
    assert.equal(events[1]?.data.success, false);
    assert.equal(reverted.data.failed, "execution");
    assert.equal(reverted.data.reason, "Withdraw amount too large");
    assert.equal(reverted.data.actualGasCost, event.actualGasCost.toString());
  });

  test("a signature never used gives expired once its window has passed, with the hold it released", async () => {
    const fresh = await freshOperation(app);
    const answer = await requestSponsorship(app.t, dapp, fresh.op, { expiryDuration: 1 });
    assert.equal(answer.reason, undefined);
    const [signed] = await eventually(
      "signed",
      () =>
        to
          .accepted()
          .filter(
            (event) => event.type === "sponsorship.signed" && event.data.sender === fresh.op.sender.toLowerCase(),
          ),
      (found) => found.length === 1,
    );
    assert.ok(signed);
    // Past the window and settlement's margin, by the service's clock (within the receiver's five minutes).
    app.advance((EXPIRY_MARGIN_SECONDS + 3) * 1000);
    await settlement.settleOnce();
    const [expired] = await eventually(
      "expired",
      () =>
        to
          .accepted()
          .filter((event) => event.type === "sponsorship.expired" && event.data.userOpHash === signed.data.userOpHash),
      (found) => found.length === 1,
    );
    assert.ok(expired);
    assert.equal(expired.data.cause, "expired");
    assert.equal(expired.data.validUntil, signed.data.validUntil);
    assert.equal(expired.data.releasedWei, signed.data.heldWei);
    assert.ok(expired.sequence > signed.sequence);
    assert.deepEqual(expired.verifiedBy, [0]);
  });
});
