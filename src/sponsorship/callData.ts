import { type Address, checksumAddress, decodeAbiParameters, type Hex, parseAbiParameters } from "viem";
import { decodeErc7579Execute, decodeErc7579ExecuteUserOp } from "./erc7579";

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
const callArray = parseAbiParameters("(address target, uint256 value, bytes data)[]");

const decodeSingle: Decoder = (args) => {
  const [to, value, data] = singleInCanonicalForm(args) ?? decodeAbiParameters(single, args);
  return { ok: true, calls: [{ to, value, data }] };
};

const HEX_DIGITS = /^0x[0-9a-fA-F]*$/;
const ADDRESS_WORD_PADDING = "0".repeat(24);
/** The bytes' offset in the canonical encoding of (address, uint256, bytes): right after the three head words. */
const BYTES_OFFSET_WORD = `${"0".repeat(62)}60`;

/**
 * (address, uint256, bytes) read straight from the hex when it is in the form abi.encode writes (what every wallet
 * sends): the address word's padding zero, the bytes right after the head, nothing after their padding. viem's
 * decoder gives the same values for such input (test/sponsorship/callDataFastPath.test.ts compares them) at about a
 * tenth of the cost, and the whitelist reads every operation's calls; anything else is left to viem.
 */
function singleInCanonicalForm(args: Hex): readonly [Address, bigint, Hex] | undefined {
  // "0x", three head words and the length word: 2 + 4 · 64 digits at least.
  if (args.length < 258 || !HEX_DIGITS.test(args)) return undefined;
  if (args.slice(2, 26) !== ADDRESS_WORD_PADDING || args.slice(130, 194) !== BYTES_OFFSET_WORD) return undefined;
  const lengthWord = args.slice(194, 258);
  // A length beyond what the input can hold is viem's to refuse.
  if (!/^0{50}/.test(lengthWord)) return undefined;
  const length = Number.parseInt(lengthWord, 16);
  if (args.length !== 258 + Math.ceil(length / 32) * 64) return undefined;
  return [
    checksumAddress(`0x${args.slice(26, 66)}`),
    BigInt(`0x${args.slice(66, 130)}`),
    `0x${args.slice(258, 258 + length * 2).toLowerCase()}`,
  ];
}

/**
 * Biconomy's batches, and SimpleAccount 0.7's, may leave the value array empty (no value anywhere); any other mismatch
 * is refused.
 */
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

/** An array of (target, value, data): SimpleAccount 0.8's `Call[]`, Coinbase Smart Wallet's `Call[]`. */
const decodeCallArray: Decoder = (args) => {
  const [calls] = decodeAbiParameters(callArray, args);
  return { ok: true, calls: calls.map(({ target, value, data }) => ({ to: target, value, data })) };
};

/** Safe's 4337 module: operation 1 is a delegatecall, which runs foreign code as the account itself. */
const decodeSafe: Decoder = (args) => {
  const [to, value, data, operation] = decodeAbiParameters(safeCall, args);
  if (operation !== 0) return { ok: false, reason: "Safe delegatecall operations are never sponsored" };
  return { ok: true, calls: [{ to, value, data }] };
};

/** An account layout's selectors: selector → decoder. */
type Layout = Record<string, Decoder>;

/**
 * The callData layouts of docs/sponsorship-rpc.md, 'callData layouts', by account name (upper case) and version.
 * Layouts that share a selector share its decoder object, which is what makes the selector unambiguous when no account
 * is named (indexSelectors).
 */
const LAYOUTS: Record<string, Layout> = {
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
  // SimpleAccount of @account-abstraction/contracts 0.7.0 (EntryPoint v0.7).
  "INFINITISM 0.7.0": {
    "0xb61d27f6": decodeSingle,
    "0x47e1da2a": decodeBatchWithValues,
  },
  // SimpleAccount and Simple7702Account of @account-abstraction/contracts 0.8.0 (EntryPoint v0.8): BaseAccount's methods.
  "INFINITISM 0.8.0": {
    "0xb61d27f6": decodeSingle,
    "0x34fcd5be": decodeCallArray,
  },
  // The Safe 4337 module: 0.2.0 (EntryPoint v0.6) and 0.3.0 (v0.7) have the same two methods.
  "SAFE 1.4.1": {
    "0x7bb37428": decodeSafe,
    "0x541d63c8": decodeSafe,
  },
  // Modular accounts: Kernel v3, Biconomy Nexus, Safe with the ERC-7579 adapter; executeUserOp(…) wrapping execute.
  "ERC7579 1.0.0": {
    "0xe9ae5c53": decodeErc7579Execute,
    "0x8dd7712f": decodeErc7579ExecuteUserOp,
  },
  // Coinbase Smart Wallet; "1" is the version of its EIP-712 domain.
  "COINBASE_SMART_WALLET 1": {
    "0xb61d27f6": decodeSingle,
    "0x34fcd5be": decodeCallArray,
  },
};

export const SUPPORTED_ACCOUNTS = Object.keys(LAYOUTS);

/** The account a request names (`sponsorshipInfo.smartAccountInfo`). */
export interface SmartAccountInfo {
  name: string;
  version: string;
}

/** What a selector means across all layouts: the accounts that use it, and its decoder when they all read it alike. */
interface SelectorUse {
  accounts: string[];
  /** Undefined when two accounts read the selector differently: the selector alone cannot say which is meant. */
  decode: Decoder | undefined;
}

/**
 * Every selector of every layout, for requests that name no account. A selector used by several layouts with the same
 * decoder (`execute(address,uint256,bytes)` of Biconomy 2.0.0 and SimpleAccount) reads the same calls whichever the
 * account is; one they read differently is ambiguous, and is refused until the request names the account.
 */
export function indexSelectors(layouts: Record<string, Layout>): Map<string, SelectorUse> {
  const index = new Map<string, SelectorUse>();
  for (const [account, layout] of Object.entries(layouts)) {
    for (const [selector, decode] of Object.entries(layout)) {
      const use = index.get(selector);
      if (!use) index.set(selector, { accounts: [account], decode });
      else {
        use.accounts.push(account);
        if (use.decode !== decode) use.decode = undefined;
      }
    }
  }
  return index;
}

const SELECTORS = indexSelectors(LAYOUTS);

const NAME_THE_ACCOUNT =
  'name the account in sponsorshipInfo.smartAccountInfo ({"name", "version"}); known accounts: ' +
  SUPPORTED_ACCOUNTS.join(", ");

/**
 * The calls a user operation's callData makes. For a named account, as that account's layout only; for none, as the
 * layout its selector belongs to. Anything we cannot read for certain is refused (fail closed): an unknown account, a
 * selector of no known layout (or, for a named account, not of its layout), or bytes that do not decode.
 */
export function decodeAccountCalls(callData: Hex, account?: SmartAccountInfo): DecodedCalls {
  return decodeWith(callData, account, SELECTORS);
}

/** decodeAccountCalls over a given selector index: the index is a parameter so that ambiguity can be tested. */
export function decodeWith(
  callData: Hex,
  account: SmartAccountInfo | undefined,
  selectors: Map<string, SelectorUse>,
): DecodedCalls {
  if (callData === "0x") return { ok: true, calls: [] };
  const selector = callData.slice(0, 10).toLowerCase();
  if (account) {
    const key = `${account.name.toUpperCase()} ${account.version}`;
    const layout = LAYOUTS[key];
    if (!layout) {
      return { ok: false, reason: `unknown smart account ${key}; supported: ${SUPPORTED_ACCOUNTS.join(", ")}` };
    }
    const decode = callData.length >= 10 ? layout[selector] : undefined;
    if (!decode) return { ok: false, reason: `unknown callData layout: selector ${selector} of ${key}` };
    return run(decode, callData, selector, key);
  }
  const use = callData.length >= 10 ? selectors.get(selector) : undefined;
  if (!use) {
    return {
      ok: false,
      reason: `unknown callData layout: selector ${selector} is no execute or executeBatch method of a known account; ${NAME_THE_ACCOUNT}`,
    };
  }
  if (!use.decode) {
    return {
      ok: false,
      reason: `ambiguous callData layout: selector ${selector} is read differently by ${use.accounts.join(" and ")}; ${NAME_THE_ACCOUNT}`,
    };
  }
  return run(use.decode, callData, selector, use.accounts.join(" or "));
}

function run(decode: Decoder, callData: Hex, selector: string, accounts: string): DecodedCalls {
  try {
    return decode(`0x${callData.slice(10)}`);
  } catch {
    return { ok: false, reason: `callData does not decode as ${accounts} selector ${selector}` };
  }
}
