import {
  FEE_FIELDS,
  GAS_LIMIT_FIELDS,
  MAX_FEE,
  MAX_GAS,
  type PartialUserOperation,
} from "../sponsorship/partialUserOperation";
import { address, bytes, object, uint } from "./params";
import { invalidParams } from "./rpcError";

export function parseUserOperation(value: unknown, label = "params[0]"): PartialUserOperation {
  const op = object(value, label);
  const userOp: PartialUserOperation = {
    sender: address(op.sender, `${label}.sender`),
    nonce: op.nonce === undefined ? missing(`${label}.nonce`) : uint(op.nonce, `${label}.nonce`),
    initCode: bytes(op.initCode, `${label}.initCode`),
    callData: bytes(op.callData, `${label}.callData`),
  };
  for (const field of GAS_LIMIT_FIELDS) {
    if (op[field] !== undefined && op[field] !== null) userOp[field] = uint(op[field], `${label}.${field}`, MAX_GAS);
  }
  for (const field of FEE_FIELDS) {
    if (op[field] !== undefined && op[field] !== null) userOp[field] = uint(op[field], `${label}.${field}`, MAX_FEE);
  }
  return userOp;
}

function missing(label: string): never {
  throw invalidParams(`${label} is required`);
}
