// The EntryPoint v0.9 stack (EntryPoint, Simple7702Account, SimpleAccountFactory) as CREATE2 deployments through the
// deterministic deployer. npm has no v0.9 release whose EntryPoint lands at the canonical address, so the call data
// (salt ++ init code) comes from contracts/canonical/v09/, copied from the Alto bundler's test suite (see the README
// there). Each deployment is checked against the address the ecosystem expects, so a damaged file fails here.
import { readFileSync } from "node:fs";
import { type Address, getContractAddress, type Hex, isAddressEqual, isHex, keccak256, slice } from "viem";
import { ENTRY_POINT_V09_ADDRESS } from "../bindings/entryPoints/entryPointV09";
import { CREATE2_DEPLOYER_ADDRESS } from "./deployments";
import type { SaltedDeployment } from "./entryPointV07Deployments";

/** viem's toSimple7702SmartAccount({ entryPoint: '0.9' }) delegates to this implementation. */
export const SIMPLE_7702_ACCOUNT_V09_ADDRESS: Address = "0xa46cc63eBF4Bd77888AA327837d20b23A63a56B5";
/** Not canonical (eth-infinitism published no factory deployment for v0.9): where Alto's tests deploy it. */
export const SIMPLE_ACCOUNT_FACTORY_V09_ADDRESS: Address = "0xf4A7018FdBF22804526eC4b77DcE4f9b0D27a395";

/**
 * keccak-256 of the EntryPoint v0.9 init code (24,855 bytes). The runtime code differs per chain (the EIP-712 domain
 * is kept in immutables), so this, not a code hash read from a chain, is what identifies the release.
 */
export const ENTRY_POINT_V09_INIT_CODE_HASH: Hex = "0x02025307db5c9d7eeccd47fb6367c13def38d851a60dc851df2089ab61d45068";

function fromCallData(name: string, file: string, expected: Address): SaltedDeployment {
  const data = readFileSync(new URL(`../../contracts/canonical/v09/${file}`, import.meta.url), "utf8").trim();
  if (!isHex(data) || data.length <= 66) throw new Error(`contracts/canonical/v09/${file} is not salt ++ init code`);
  const salt = slice(data, 0, 32);
  const initCode = slice(data, 32);
  const address = getContractAddress({ opcode: "CREATE2", from: CREATE2_DEPLOYER_ADDRESS, salt, bytecode: initCode });
  if (!isAddressEqual(address, expected)) {
    throw new Error(`${name} from contracts/canonical/v09/${file} lands at ${address}, not ${expected}`);
  }
  return { name, salt, initCode, address };
}

export interface EntryPointV09Stack {
  entryPoint: SaltedDeployment;
  simple7702Account: SaltedDeployment;
  simpleAccountFactory: SaltedDeployment;
}

let stack: EntryPointV09Stack | undefined;

/** The three deployments, read once; in dependency order (the factory's constructor reads the EntryPoint). */
export function entryPointV09Stack(): EntryPointV09Stack {
  stack ??= {
    entryPoint: fromCallData("EntryPoint v0.9", "entry_point_v09.create2.hex", ENTRY_POINT_V09_ADDRESS),
    simple7702Account: fromCallData(
      "Simple7702Account v0.9",
      "simple_7702_account_implementation_v09.create2.hex",
      SIMPLE_7702_ACCOUNT_V09_ADDRESS,
    ),
    simpleAccountFactory: fromCallData(
      "SimpleAccountFactory v0.9",
      "simple_account_factory_v09.create2.hex",
      SIMPLE_ACCOUNT_FACTORY_V09_ADDRESS,
    ),
  };
  if (keccak256(stack.entryPoint.initCode) !== ENTRY_POINT_V09_INIT_CODE_HASH) {
    throw new Error("EntryPoint v0.9 init code is not the v0.9.0 release's");
  }
  return stack;
}
