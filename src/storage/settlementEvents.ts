import type { NewEvent } from "./eventOutbox";
import type { OperationEvent } from "./settlement";

// What settlement tells the dApps (docs/events.md): sponsorship.included for every operation of theirs the chain ran,
// sponsorship.reverted besides when its execution, its token charge or its refund failed, and sponsorship.expired for a
// signature released unused. Written by settlement in the transaction that settles or releases the rows.

/** A sponsorship row as settlement's statements return it for the events. */
export interface SettledForEvents {
  paymaster_id: string;
  chain_id: string;
  user_op_hash: string | null;
  sender: string;
  nonce: string;
  entry_point: string | null;
  mode: string | null;
}

/** A released row: its window and what it held against the deposit. */
export interface ReleasedForEvents extends SettledForEvents {
  valid_until: string | null;
  max_charge: string | null;
}

/** A settled row: besides, where the up-front token paymaster kept the prefund, what it was charged and at what. */
export interface IncludedForEvents extends SettledForEvents {
  /** The token charge settled (the maximum token cost, for a kept prefund). */
  token_charge: string | null;
  /** For a kept prefund only: the fee token and exchange rate of the record's ERC20 outcome. */
  kept_outcome: { feeToken: string | null; exchangeRate: string | null } | null;
}

/** The columns of those rows (`s` is the sponsorships row). */
export const EVENT_COLUMNS =
  "s.paymaster_id::text AS paymaster_id, s.user_op_hash, s.sender, s.nonce::text AS nonce, s.entry_point, s.mode";

const operationOf = (row: SettledForEvents) => ({
  paymasterId: row.paymaster_id,
  chainId: Number(row.chain_id),
  userOpHash: row.user_op_hash,
  sender: row.sender,
  nonce: row.nonce,
  entryPoint: row.entry_point,
  mode: row.mode,
});

/** Rows of one operation (the same signature recorded twice) make one event per paymaster. */
function oncePerOperation<Row extends SettledForEvents>(rows: readonly Row[]): Row[] {
  const seen = new Map<string, Row>();
  for (const row of rows) seen.set(`${row.paymaster_id}:${row.user_op_hash ?? `${row.sender}:${row.nonce}`}`, row);
  return [...seen.values()];
}

/** included (and reverted where something failed) for settled rows, from their UserOperationEvents. */
export function inclusionEvents(rows: readonly IncludedForEvents[], events: readonly OperationEvent[]): NewEvent[] {
  const byHash = new Map(events.map((event) => [event.userOpHash.toLowerCase(), event]));
  const out: NewEvent[] = [];
  for (const row of oncePerOperation(rows)) {
    const event = row.user_op_hash ? byHash.get(row.user_op_hash) : undefined;
    if (!event) continue;
    const operation = operationOf(row);
    const mined = {
      transactionHash: event.txHash.toLowerCase(),
      blockNumber: Number(event.blockNumber),
      actualGasCost: event.actualGasCost.toString(),
      actualGasUsed: event.actualGasUsed.toString(),
      success: event.success,
    };
    out.push({
      paymasterId: row.paymaster_id,
      chainId: operation.chainId,
      type: "sponsorship.included",
      data: { ...operation, ...mined, tokenCharge: row.mode === "ERC20" ? tokenChargeOf(row, event) : null },
    });
    // A reverted postOp undoes the execution and fails the operation: for the up-front paymaster, the refund is what
    // failed, whatever the execution did.
    const failure = event.refundFailure
      ? { failed: "refund", reason: event.refundFailure }
      : !event.success
        ? { failed: "execution", reason: event.revertReason ?? "the execution reverted without a reason" }
        : event.tokenChargeFailure
          ? { failed: "tokenCharge", reason: event.tokenChargeFailure }
          : undefined;
    if (failure) {
      out.push({
        paymasterId: row.paymaster_id,
        chainId: operation.chainId,
        type: "sponsorship.reverted",
        data: {
          ...operation,
          ...mined,
          ...failure,
          ...(event.success || !event.tokenChargeFailure ? {} : { tokenChargeFailure: event.tokenChargeFailure }),
        },
      });
    }
  }
  return out;
}

/**
 * What an ERC20 mode operation paid: our token paymaster's TokenCharged (with the refund, from the up-front one), or,
 * where the up-front paymaster's refund failed, the prefund it kept (the row's settled charge) with nothing refunded.
 */
function tokenChargeOf(row: IncludedForEvents, event: OperationEvent) {
  const charge = event.tokenCharge;
  if (charge) {
    return {
      feeToken: charge.feeToken,
      amount: charge.amount.toString(),
      exchangeRate: charge.exchangeRate.toString(),
      ...(charge.refund === undefined ? {} : { refund: charge.refund.toString() }),
    };
  }
  const kept = row.kept_outcome;
  if (!event.refundFailure || !kept?.feeToken || row.token_charge === null) return null;
  return {
    feeToken: kept.feeToken.toLowerCase(),
    amount: row.token_charge,
    exchangeRate: kept.exchangeRate,
    refund: "0",
    refundFailure: event.refundFailure,
  };
}

/**
 * expired for rows released unmined: `expired` when their window passed, `superseded` when another signature of the
 * same sender and nonce was mined (this one can never run).
 */
export function expiryEvents(rows: readonly ReleasedForEvents[], cause: "expired" | "superseded"): NewEvent[] {
  return oncePerOperation(rows).map((row) => ({
    paymasterId: row.paymaster_id,
    chainId: Number(row.chain_id),
    type: "sponsorship.expired",
    data: {
      ...operationOf(row),
      validUntil: row.valid_until === null ? null : Number(row.valid_until),
      releasedWei: row.max_charge,
      cause,
    },
  }));
}
