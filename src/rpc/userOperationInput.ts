import { type Address, type Hex, maxUint256 } from "viem";
import { PartialUserOperationV06 } from "../schemas/rpc/userOperationV06";
import {
  FEE_FIELDS,
  GAS_LIMIT_FIELDS,
  MAX_FEE,
  MAX_GAS,
  type PartialUserOperation,
} from "../sponsorship/partialUserOperation";
import { inRange } from "./params";
import { schemaCheck } from "./schemaCheck";

const userOperationCheck = schemaCheck<typeof PartialUserOperationV06, PartialUserOperationV06>(
  PartialUserOperationV06,
);

/** The operation as sent (src/schemas/rpc/userOperationV06.ts), and the account's signature, which sizes estimates. */
export interface UserOperationInput {
  userOp: PartialUserOperation;
  signature: Hex;
}

/** params[0]: the schema's check, then the numbers as bigints within their ranges and the hex in lower case. */
export function readUserOperation(value: unknown, label = "params[0]"): UserOperationInput {
  const op = userOperationCheck.read(value, label);
  const userOp: PartialUserOperation = {
    sender: op.sender.toLowerCase() as Address,
    nonce: inRange(BigInt(op.nonce), `${label}.nonce`, maxUint256),
    initCode: lowerBytes(op.initCode),
    callData: lowerBytes(op.callData),
  };
  readGasFields(op, userOp, label);
  return { userOp, signature: lowerBytes(op.signature) };
}

type GasField = (typeof GAS_LIMIT_FIELDS)[number] | (typeof FEE_FIELDS)[number];

/** The gas limits and fees the client sent, as bigints within their ranges; absent ones stay absent. */
export function readGasFields(
  sent: Partial<Record<GasField, string | number | null>>,
  userOp: Partial<Record<GasField, bigint>>,
  label: string,
): void {
  for (const field of GAS_LIMIT_FIELDS) {
    const given = sent[field];
    if (given !== undefined && given !== null) userOp[field] = inRange(BigInt(given), `${label}.${field}`, MAX_GAS);
  }
  for (const field of FEE_FIELDS) {
    const given = sent[field];
    if (given !== undefined && given !== null) userOp[field] = inRange(BigInt(given), `${label}.${field}`, MAX_FEE);
  }
}

export function parseUserOperation(value: unknown, label = "params[0]"): PartialUserOperation {
  return readUserOperation(value, label).userOp;
}

const lowerBytes = (value: string | null | undefined) => (value ?? "0x").toLowerCase() as Hex;
