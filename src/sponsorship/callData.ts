import { type Address, decodeAbiParameters, type Hex, parseAbiParameters } from "viem";

/** One call an account makes on behalf of a user operation. */
export interface Call {
  to: Address;
  value: bigint;
  data: Hex;
}

export type DecodedCalls = { ok: true; calls: Call[] } | { ok: false; reason: string };

type Decoder = (args: Hex) => DecodedCalls;

const single = parseAbiParameters("address, uint256, bytes");
const batchWithValues = parseAbiParameters("address[], uint256[], bytes[]");
const batchWithoutValues = parseAbiParameters("address[], bytes[]");
const safeCall = parseAbiParameters("address, uint256, bytes, uint8");

const decodeSingle: Decoder = (args) => {
  const [to, value, data] = decodeAbiParameters(single, args);
  return { ok: true, calls: [{ to, value, data }] };
};

/** Biconomy's batches may leave the value array empty (no value anywhere); any other mismatch is refused. */
const decodeBatchWithValues: Decoder = (args) => {
  const [targets, values, datas] = decodeAbiParameters(batchWithValues, args);
  if (targets.length !== datas.length || (values.length !== 0 && values.length !== targets.length)) {
    return { ok: false, reason: "batch callData has arrays of different lengths" };
  }
  return {
    ok: true,
    calls: targets.map((to, i) => ({ to, value: values[i] ?? 0n, data: datas[i] as Hex })),
  };
};

const decodeBatchWithoutValues: Decoder = (args) => {
  const [targets, datas] = decodeAbiParameters(batchWithoutValues, args);
  if (targets.length !== datas.length) return { ok: false, reason: "batch callData has arrays of different lengths" };
  return { ok: true, calls: targets.map((to, i) => ({ to, value: 0n, data: datas[i] as Hex })) };
};

/** Safe's 4337 module: operation 1 is a delegatecall, which runs foreign code as the account itself. */
const decodeSafe: Decoder = (args) => {
  const [to, value, data, operation] = decodeAbiParameters(safeCall, args);
  if (operation !== 0) return { ok: false, reason: "Safe delegatecall operations are never sponsored" };
  return { ok: true, calls: [{ to, value, data }] };
};

/** The callData layouts of docs/sponsorship-rpc.md, by account name (upper case) and version: selector → decoder. */
const LAYOUTS: Record<string, Record<string, Decoder>> = {
  "BICONOMY 2.0.0": {
    "0x0000189a": decodeSingle,
    "0xb61d27f6": decodeSingle,
    "0x00004680": decodeBatchWithValues,
    "0x47e1da2a": decodeBatchWithValues,
  },
  "BICONOMY 1.0.0": {
    "0x00000772": decodeSingle,
    "0x9e5d4c49": decodeSingle,
    "0x00008f2d": decodeBatchWithValues,
    "0x912ccaa3": decodeBatchWithValues,
  },
  "INFINITISM 1.0.0": {
    "0xb61d27f6": decodeSingle,
    "0x18dfb3c7": decodeBatchWithoutValues,
  },
  "SAFE 1.4.1": {
    "0x7bb37428": decodeSafe,
    "0x541d63c8": decodeSafe,
  },
};

export const SUPPORTED_ACCOUNTS = Object.keys(LAYOUTS);

/**
 * The calls a user operation's callData makes, for the account it says it is. Anything we cannot read for certain is
 * refused (fail closed): an unknown account, an unknown selector, or bytes that do not decode.
 */
export function decodeAccountCalls(callData: Hex, account: { name: string; version: string }): DecodedCalls {
  if (callData === "0x") return { ok: true, calls: [] };
  const key = `${account.name.toUpperCase()} ${account.version}`;
  const layout = LAYOUTS[key];
  if (!layout) {
    return { ok: false, reason: `unknown smart account ${key}; supported: ${SUPPORTED_ACCOUNTS.join(", ")}` };
  }
  const selector = callData.slice(0, 10).toLowerCase();
  const decode = callData.length >= 10 ? layout[selector] : undefined;
  if (!decode) return { ok: false, reason: `unknown callData layout: selector ${selector} of ${key}` };
  try {
    return decode(`0x${callData.slice(10)}`);
  } catch {
    return { ok: false, reason: `callData does not decode as ${key} selector ${selector}` };
  }
}
