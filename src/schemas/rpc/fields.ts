import Type from "typebox";
import { Address, HexBytes, HexQuantity } from "../primitives";
import { withMessages } from "./messages";

/**
 * The field shapes the JSON-RPC methods share, with their -32602 messages. Numbers come as `0x` hex, decimal strings or
 * JSON numbers (wallets send all three); ranges beyond uint256 (gas limits, fees) are checked where the value is read.
 */

const UINT_PROBLEM = "must be a non-negative integer as 0x hex, a decimal string or a number";

/** An unsigned integer in any of the three spellings wallets use. */
export const RpcUint = withMessages(
  Type.Union(
    [
      HexQuantity,
      Type.String({ pattern: "^[0-9]{1,78}$", description: "unsigned integer as a decimal string" }),
      Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: "unsigned integer as a JSON number" }),
    ],
    { description: "unsigned integer: 0x hex, a decimal string or a JSON number" },
  ),
  { problem: UINT_PROBLEM },
);

export const RpcAddress = withMessages(Address, {
  problem: "must be an address: 0x followed by 40 hex digits",
  missing: "is required",
});

export const RpcBytes = withMessages(HexBytes, { problem: "must be 0x-prefixed hex of whole bytes" });

/** Bytes that may be left out or null, which counts as empty (`0x`). */
export const OptionalBytes = Type.Optional(
  withMessages(Type.Union([HexBytes, Type.Null()], { description: "bytes; absent or null counts as 0x" }), {
    problem: "must be 0x-prefixed hex of whole bytes",
  }),
);

/** A uint that may be left out or null (the gas fields an estimate fills in). */
export const OptionalUint = Type.Optional(
  withMessages(
    Type.Union([...RpcUint.anyOf, Type.Null()], {
      description: "unsigned integer: 0x hex, a decimal string or a JSON number; absent or null when estimated",
    }),
    {
      problem: UINT_PROBLEM,
    },
  ),
);

/**
 * The gas limits and fees every EntryPoint version's operation carries under the same five names, as a client may send
 * them for sponsorship: each may be left out (estimated).
 */
export const partialGasFields = {
  callGasLimit: OptionalUint,
  verificationGasLimit: OptionalUint,
  preVerificationGas: OptionalUint,
  maxFeePerGas: OptionalUint,
  maxPriorityFeePerGas: OptionalUint,
};

/** The same five, all present: a complete operation's. */
export const gasFields = {
  callGasLimit: RpcUint,
  verificationGasLimit: RpcUint,
  preVerificationGas: RpcUint,
  maxFeePerGas: RpcUint,
  maxPriorityFeePerGas: RpcUint,
};

export const RpcBoolean = withMessages(Type.Boolean(), { problem: "must be true or false" });

/** A JSON object with any members (webhookData, the context's unknown fields). */
export const AnyObject = withMessages(Type.Record(Type.String(), Type.Unknown()), { problem: "must be an object" });
