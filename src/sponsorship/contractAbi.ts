import { keccak256, toBytes } from "viem";

/** A callable function of a whitelisted contract: its name and its 4-byte selector (`0x` + 8 hex digits). */
export interface AbiFunction {
  name: string;
  signature: string;
  selector: string;
}

export interface ContractAbi {
  functions: AbiFunction[];
  /** Every function name once, in ABI order: the `methods` of the interface. */
  methods: string[];
}

/**
 * An ABI or a whitelist that cannot be used, with a message naming where it is wrong; the management API answers it as
 * a 400 with that message (src/actions/contracts.ts).
 */
export class InvalidAbiError extends Error {
  override name = "InvalidAbiError";
}

const invalid = (message: string) => new InvalidAbiError(message);

const ITEM_TYPES = new Set(["function", "event", "error", "constructor", "fallback", "receive"]);
const ELEMENTARY =
  /^(address|bool|string|bytes([1-9]|[12][0-9]|3[0-2])?|u?int(8|16|24|32|40|48|56|64|72|80|88|96|104|112|120|128|136|144|152|160|168|176|184|192|200|208|216|224|232|240|248|256)?|function)$/;
const ARRAY_SUFFIX = /((\[[1-9]\d*\])|(\[\]))*$/;
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/**
 * Parses the stringified ABI of a whitelisted contract. Anything that is not a JSON ABI is refused with a message
 * that says where it is wrong, because the selectors computed here decide what the service pays for.
 */
export function parseContractAbi(abiText: string): ContractAbi {
  let items: unknown;
  try {
    items = JSON.parse(abiText);
  } catch {
    throw invalid("abi must be a JSON string of an ABI array");
  }
  if (!Array.isArray(items)) throw invalid("abi must be a JSON array of ABI items");
  const functions: AbiFunction[] = [];
  items.forEach((item, index) => {
    if (typeof item !== "object" || item === null || Array.isArray(item)) {
      throw invalid(`abi[${index}] must be an object`);
    }
    const { type = "function", name, inputs } = item as Record<string, unknown>;
    if (typeof type !== "string" || !ITEM_TYPES.has(type)) {
      throw invalid(`abi[${index}].type must be one of ${[...ITEM_TYPES].join(", ")}`);
    }
    if (type !== "function") return;
    if (typeof name !== "string" || !IDENTIFIER.test(name)) {
      throw invalid(`abi[${index}].name must be a function name`);
    }
    const signature = `${name}(${parameterTypes(inputs ?? [], `abi[${index}].inputs`).join(",")})`;
    functions.push({ name, signature, selector: keccak256(toBytes(signature)).slice(0, 10) });
  });
  return { functions, methods: [...new Set(functions.map((f) => f.name))] };
}

/** Canonical types of a parameter list, with tuples written out as `(a,b)` as the selector needs. */
function parameterTypes(params: unknown, where: string): string[] {
  if (!Array.isArray(params)) throw invalid(`${where} must be an array`);
  return params.map((param, index) => {
    const at = `${where}[${index}]`;
    if (typeof param !== "object" || param === null) throw invalid(`${at} must be an object`);
    const { type, components } = param as Record<string, unknown>;
    if (typeof type !== "string") throw invalid(`${at}.type must be a string`);
    const suffix = type.match(ARRAY_SUFFIX)?.[0] ?? "";
    const base = type.slice(0, type.length - suffix.length);
    if (base === "tuple") return `(${parameterTypes(components, `${at}.components`).join(",")})${suffix}`;
    if (!ELEMENTARY.test(base)) throw invalid(`${at}.type "${type}" is not a Solidity ABI type`);
    return canonical(base) + suffix;
  });
}

/** `uint` and `int` are aliases of their 256-bit forms in selectors. */
const canonical = (base: string) => (base === "uint" ? "uint256" : base === "int" ? "int256" : base);

/** Checks that every whitelisted name is a function of the ABI; the message names the first one that is not. */
export function checkWhitelistedMethods(abi: ContractAbi, whitelisted: string[]): void {
  for (const name of whitelisted) {
    if (!abi.methods.includes(name)) {
      throw invalid(`whitelistedMethods: "${name}" is not a function of the contract's ABI`);
    }
  }
}
