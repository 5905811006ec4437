// The deployment data of the smart accounts that wallets use (contracts/accounts/*.json): for each contract, the
// deployer it goes through, the salt and the creation code, and the address it lands at. The data is not ours: each
// file names its source (an npm package or a public repository, at a version or commit). Every entry is checked here,
// when it is loaded, by recomputing its address from the deployer, salt and code: a file edited by hand, or a source
// that changed, fails at start instead of deploying a contract where no wallet looks for it.
import {
  type Address,
  concat,
  encodeFunctionData,
  getContractAddress,
  type Hex,
  isAddress,
  isAddressEqual,
  isHex,
  parseAbi,
} from "viem";
import type { ChainClients } from "./localDeployment";

export interface AccountContractDeployment {
  name: string;
  /** Where the client libraries expect it (their default addresses). */
  address: Address;
  /** The CREATE2 (or CREATE3) factory the deployment transaction goes to. */
  deployer: Address;
  salt: Hex;
  /** Creation code with its constructor arguments appended. */
  initCode: Hex;
  /**
   * A CREATE3 deployment (Biconomy's factory): the address depends on the factory and the salt only, so for these the
   * address check proves the salt, not the code; the code rests on its source alone.
   */
  create3?: boolean;
}

export interface AccountDeploymentData {
  /** Where the salts and creation code come from. */
  source: string;
  deployments: AccountContractDeployment[];
}

/**
 * The init code a CREATE3 factory deploys first, at CREATE2(factory, salt): a proxy that CREATEs the real contract
 * (so the contract's address is the proxy's first CREATE). The same bytes in 0xSequence's and Solmate's CREATE3.
 */
const CREATE3_PROXY_INIT_CODE: Hex = "0x67363d3d37363d34f03d5260086018f3";

const create3FactoryAbi = parseAbi(["function deploy(bytes32 salt, bytes initCode)"]);

/** Where the deployment lands, from its deployer, salt and code (CREATE3: deployer and salt). */
export function landingAddress(deployment: Omit<AccountContractDeployment, "address" | "name">): Address {
  const { deployer, salt, initCode } = deployment;
  if (!deployment.create3) return getContractAddress({ opcode: "CREATE2", from: deployer, salt, bytecode: initCode });
  const proxy = getContractAddress({ opcode: "CREATE2", from: deployer, salt, bytecode: CREATE3_PROXY_INIT_CODE });
  return getContractAddress({ opcode: "CREATE", from: proxy, nonce: 1n });
}

/** The data of the transaction to the deployer: `salt ‖ initCode` for a CREATE2 proxy, a call for the CREATE3 one. */
export function deploymentCallData(deployment: AccountContractDeployment): Hex {
  return deployment.create3
    ? encodeFunctionData({
        abi: create3FactoryAbi,
        functionName: "deploy",
        args: [deployment.salt, deployment.initCode],
      })
    : concat([deployment.salt, deployment.initCode]);
}

/** Checks one data file's shape and every address in it; `file` names it in the errors. */
export function loadAccountDeploymentData(json: unknown, file: string): AccountDeploymentData {
  const raw = json as { source?: unknown; deployments?: unknown };
  if (typeof raw.source !== "string" || !Array.isArray(raw.deployments) || raw.deployments.length === 0) {
    throw new Error(`${file}: expected {source, deployments: [...]}`);
  }
  const deployments = raw.deployments.map((entry: Record<string, unknown>, index) => {
    const { name, address, deployer, salt, initCode, create3 } = entry;
    if (
      typeof name !== "string" ||
      typeof address !== "string" ||
      !isAddress(address) ||
      typeof deployer !== "string" ||
      !isAddress(deployer) ||
      !isHex(salt) ||
      salt.length !== 66 ||
      !isHex(initCode) ||
      initCode.length <= 2 ||
      (create3 !== undefined && typeof create3 !== "boolean")
    ) {
      throw new Error(`${file}: deployments[${index}] needs name, address, deployer, a 32-byte salt and initCode`);
    }
    const deployment: AccountContractDeployment = { name, address, deployer, salt, initCode, create3 };
    const lands = landingAddress(deployment);
    if (!isAddressEqual(lands, address)) {
      throw new Error(`${file}: ${name} would land at ${lands}, not at ${address} where wallets look for it`);
    }
    return deployment;
  });
  return { source: raw.source, deployments };
}

/** One account family the local chain carries: its contracts, and a step some need once they are deployed. */
export interface AccountFamily {
  /** As docs and logs name it, with its version. */
  name: string;
  /** The EntryPoint version its contracts are built for. */
  entryPointVersion: "0.6" | "0.7";
  data: AccountDeploymentData;
  /** Run after every family's contracts are there, on every start; must do nothing when already done. */
  finish?: (clients: ChainClients) => Promise<void>;
}
