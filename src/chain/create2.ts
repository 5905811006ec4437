// The deterministic deployment proxy most EVM chains carry (and anvil predeploys): a call with data salt ‖ initCode
// creates the contract with CREATE2, so its address depends only on the salt and the init code, the same on every
// chain. Our paymasters and the canonical EntryPoints are deployed through it.
import { type Address, concat, getContractAddress, type Hex, zeroHash } from "viem";

export const CREATE2_PROXY_ADDRESS: Address = "0x4e59b44847b379578588920cA78FbF26c0B4956C";

/**
 * Who sends the proxy's own pre-signed deployment transaction (a keyless, chain-id-free transaction): funding this
 * address and broadcasting that transaction puts the proxy on a chain that lacks it.
 */
export const CREATE2_PROXY_DEPLOYER: Address = "0x3fab184622dc19b6109349b94811493bf2a45362";

/** Our paymasters use the zero salt: an address then follows from the code and its constructor arguments alone. */
export const OUR_SALT: Hex = zeroHash;

export function create2Address(initCode: Hex, salt: Hex = OUR_SALT): Address {
  return getContractAddress({ opcode: "CREATE2", from: CREATE2_PROXY_ADDRESS, salt, bytecode: initCode });
}

/** The data of the transaction to the proxy that deploys `initCode`. */
export function create2CallData(initCode: Hex, salt: Hex = OUR_SALT): Hex {
  return concat([salt, initCode]);
}
