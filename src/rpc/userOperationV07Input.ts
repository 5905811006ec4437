import { type Address, type Hex, maxUint64, maxUint256, numberToHex } from "viem";
import type { LaterEntryPointVersion } from "../bindings/entryPoints/versions";
import { invalidParams } from "../errors";
import { PartialUserOperationV07 as PartialUserOperationV07Schema } from "../schemas/rpc/userOperationV07";
import { MAX_GAS } from "../sponsorship/partialUserOperation";
import type { PartialUserOperationV07 } from "../sponsorship/partialUserOperationV07";
import { inRange } from "./params";
import { schemaCheck } from "./schemaCheck";
import { readGasFields } from "./userOperationInput";

const userOperationCheck = schemaCheck<typeof PartialUserOperationV07Schema, PartialUserOperationV07Schema>(
  PartialUserOperationV07Schema,
);

export interface UserOperationV07Input {
  userOp: PartialUserOperationV07;
  /** The account's signature as sent (`0x` when none): read only to size an estimate. */
  signature: Hex;
}

/**
 * params[0] for an EntryPoint v0.7 or v0.8 request (src/schemas/rpc/userOperationV07.ts): the schema's check, then
 * numbers as bigints within their ranges, hex in lower case, and the EIP-7702 authorization from v0.8 on. The
 * paymaster fields the client sent are ours to fill, so only the paymaster's verification gas limit is kept (a bundler
 * may have estimated it).
 */
export function readUserOperationV07(
  value: unknown,
  version: LaterEntryPointVersion,
  label = "params[0]",
): UserOperationV07Input {
  const op = userOperationCheck.read(value, label);
  const userOp: PartialUserOperationV07 = {
    entryPointVersion: version,
    sender: op.sender.toLowerCase() as Address,
    nonce: inRange(BigInt(op.nonce), `${label}.nonce`, maxUint256),
    callData: lower(op.callData) ?? "0x",
  };
  if (op.factory !== undefined && op.factory !== null) {
    if (op.factory === "0x7702" && version === "0.7") {
      throw invalidParams(`${label}.factory: the EIP-7702 marker 0x7702 is for EntryPoint v0.8 and later`);
    }
    userOp.factory = op.factory.toLowerCase() as Address;
    userOp.factoryData = lower(op.factoryData) ?? "0x";
  } else if (op.factoryData !== undefined && op.factoryData !== null && op.factoryData !== "0x") {
    throw invalidParams(`${label}.factoryData is given without a factory`);
  }
  readGasFields(op, userOp, label);
  const pmVerification = op.paymasterVerificationGasLimit;
  if (pmVerification !== undefined && pmVerification !== null) {
    userOp.paymasterVerificationGasLimit = inRange(
      BigInt(pmVerification),
      `${label}.paymasterVerificationGasLimit`,
      MAX_GAS,
    );
  }
  if (op.eip7702Auth !== undefined && op.eip7702Auth !== null) {
    if (version === "0.7") {
      throw invalidParams(`${label}.eip7702Auth: EIP-7702 operations are for EntryPoint v0.8 and later`);
    }
    const auth = op.eip7702Auth;
    const where = `${label}.eip7702Auth`;
    const yParity = inRange(BigInt(auth.yParity), `${where}.yParity`, 1n);
    userOp.eip7702Auth = {
      chainId: inRange(BigInt(auth.chainId), `${where}.chainId`, maxUint256),
      address: auth.address.toLowerCase() as Address,
      nonce: inRange(BigInt(auth.nonce), `${where}.nonce`, maxUint64),
      yParity: Number(yParity),
      r: numberToHex(inRange(BigInt(auth.r), `${where}.r`, maxUint256), { size: 32 }),
      s: numberToHex(inRange(BigInt(auth.s), `${where}.s`, maxUint256), { size: 32 }),
    };
  }
  return { userOp, signature: lower(op.signature) ?? "0x" };
}

const lower = (value: string | null | undefined) =>
  value === undefined || value === null ? undefined : (value.toLowerCase() as Hex);
