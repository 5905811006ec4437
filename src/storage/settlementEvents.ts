import type { NewEvent } from "./eventOutbox";
import type { OperationEvent } from "./settlement";

// What settlement tells the dApps (docs/events.md): sponsorship.included for every operation of theirs the chain ran,
// sponsorship.reverted besides when its execution or its token charge failed, and sponsorship.expired for a signature
// released unused. Written by settlement in the transaction that settles or releases the rows.

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
export function inclusionEvents(rows: readonly SettledForEvents[], events: readonly OperationEvent[]): NewEvent[] {
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
    const charge = event.tokenCharge;
    out.push({
      paymasterId: row.paymaster_id,
      chainId: operation.chainId,
      type: "sponsorship.included",
      data: {
        ...operation,
        ...mined,
        tokenCharge:
          row.mode === "ERC20" && charge
            ? {
                feeToken: charge.feeToken,
                amount: charge.amount.toString(),
                exchangeRate: charge.exchangeRate.toString(),
              }
            : null,
      },
    });
    const failure = !event.success
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
