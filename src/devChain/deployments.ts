// Where each contract lands when deployed through the CREATE2 deployer: computed from the artifacts alone, so the service
// knows its addresses without a deployment record, and the same bytecode and arguments give the same address anywhere.
import { type Address, concat, encodeAbiParameters, getContractAddress, type Hex, zeroHash } from "viem";
import type { LaterEntryPointVersion } from "../config";
import { ENTRY_POINT_V06_ADDRESS } from "../sponsorship/entryPoints/entryPoint";
import { ENTRY_POINT_V07_ADDRESS, ENTRY_POINT_V08_ADDRESS } from "../sponsorship/entryPoints/entryPointV07";
import {
  entryPointArtifact,
  simpleAccountFactoryArtifact,
  verifyingPaymasterArtifact,
  verifyingPaymasterV07Artifact,
} from "../sponsorship/paymasters/artifacts";
import { tokenPaymasterV07Artifact } from "../sponsorship/paymasters/tokenArtifacts";

/** The deterministic deployment proxy anvil predeploys (and most public chains carry). Its call data is salt ++ initCode. */
export const CREATE2_DEPLOYER_ADDRESS: Address = "0x4e59b44847b379578588920ca78fbf26c0b4956c";
export const CREATE2_SALT: Hex = zeroHash;

/** anvil's first default account. Its private key is public: an owner for local chains only. */
export const ANVIL_FIRST_ACCOUNT: Address = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";

export interface Create2Deployment {
  name: string;
  /** CREATE2_SALT unless given (the EntryPoints v0.7 and v0.8 were deployed with salts of their own). */
  salt?: Hex;
  /** Creation code with its constructor arguments appended. */
  initCode: Hex;
  address: Address;
}

/** A deployment through the CREATE2 deployer with CREATE2_SALT. */
export function create2(name: string, initCode: Hex): Create2Deployment {
  return {
    name,
    initCode,
    address: getContractAddress({
      opcode: "CREATE2",
      from: CREATE2_DEPLOYER_ADDRESS,
      salt: CREATE2_SALT,
      bytecode: initCode,
    }),
  };
}

/** Lands at ENTRY_POINT_V06_ADDRESS: the npm bytecode is the mainnet one (test/chain checks it). */
export const entryPointDeployment = create2("EntryPoint", entryPointArtifact.bytecode);

export const simpleAccountFactoryDeployment = create2(
  "SimpleAccountFactory",
  concat([
    simpleAccountFactoryArtifact.bytecode,
    encodeAbiParameters([{ type: "address" }], [ENTRY_POINT_V06_ADDRESS]),
  ]),
);

/** The constructor arguments every paymaster of ours takes, in this order. */
export interface PaymasterArgs {
  entryPoint: Address;
  owner: Address;
  /** Only the first signer: the address must not depend on the service's key, which the owner sets afterwards. */
  verifyingSigner: Address;
}

/** One of our paymasters through the CREATE2 deployer: its bytecode with (EntryPoint, owner, first signer). */
export function paymasterDeployment(label: string, bytecode: Hex, args: PaymasterArgs): Create2Deployment {
  return create2(
    label,
    concat([
      bytecode,
      encodeAbiParameters(
        [{ type: "address" }, { type: "address" }, { type: "address" }],
        [args.entryPoint, args.owner, args.verifyingSigner],
      ),
    ]),
  );
}

function verifyingPaymasterDeployment(args: PaymasterArgs): Create2Deployment {
  return paymasterDeployment("VerifyingPaymaster", verifyingPaymasterArtifact.bytecode, args);
}

/** Our paymaster on a local chain: canonical EntryPoint, anvil's first account as owner and first signer. */
export const localVerifyingPaymasterDeployment = verifyingPaymasterDeployment({
  entryPoint: ENTRY_POINT_V06_ADDRESS,
  owner: ANVIL_FIRST_ACCOUNT,
  verifyingSigner: ANVIL_FIRST_ACCOUNT,
});

/** Moves whenever the contract's bytecode changes (not its comments: the build embeds no metadata hash). */
export const LOCAL_VERIFYING_PAYMASTER_ADDRESS: Address = localVerifyingPaymasterDeployment.address;

/**
 * Our paymaster for EntryPoint v0.7 or v0.8 (one contract, one deployment per EntryPoint): the same owner and first
 * signer as the v0.6 one, and the same salt; the EntryPoint argument alone tells the two versions' addresses apart.
 */
function verifyingPaymasterV07Deployment(args: PaymasterArgs): Create2Deployment {
  return paymasterDeployment(
    `VerifyingPaymasterV07 for EntryPoint ${args.entryPoint}`,
    verifyingPaymasterV07Artifact.bytecode,
    args,
  );
}

/** Our paymasters on a local chain for EntryPoint v0.7 and v0.8, at their canonical addresses. */
export const localVerifyingPaymasterV07Deployments = {
  "0.7": verifyingPaymasterV07Deployment({
    entryPoint: ENTRY_POINT_V07_ADDRESS,
    owner: ANVIL_FIRST_ACCOUNT,
    verifyingSigner: ANVIL_FIRST_ACCOUNT,
  }),
  "0.8": verifyingPaymasterV07Deployment({
    entryPoint: ENTRY_POINT_V08_ADDRESS,
    owner: ANVIL_FIRST_ACCOUNT,
    verifyingSigner: ANVIL_FIRST_ACCOUNT,
  }),
} as const satisfies Record<Exclude<LaterEntryPointVersion, "0.9">, Create2Deployment>;

/**
 * Our token paymaster for EntryPoint v0.7 or v0.8 (ERC20 mode), laid out like VerifyingPaymasterV07's deployment: the
 * same constructor arguments (EntryPoint, owner, first signer), so again the EntryPoint alone tells the versions apart.
 */
function tokenPaymasterV07Deployment(args: PaymasterArgs): Create2Deployment {
  return paymasterDeployment(
    `TokenPaymasterV07 for EntryPoint ${args.entryPoint}`,
    tokenPaymasterV07Artifact.bytecode,
    args,
  );
}

/** Our token paymasters on a local chain for EntryPoint v0.7 and v0.8, anvil's first account as owner and signer. */
export const localTokenPaymasterV07Deployments = {
  "0.7": tokenPaymasterV07Deployment({
    entryPoint: ENTRY_POINT_V07_ADDRESS,
    owner: ANVIL_FIRST_ACCOUNT,
    verifyingSigner: ANVIL_FIRST_ACCOUNT,
  }),
  "0.8": tokenPaymasterV07Deployment({
    entryPoint: ENTRY_POINT_V08_ADDRESS,
    owner: ANVIL_FIRST_ACCOUNT,
    verifyingSigner: ANVIL_FIRST_ACCOUNT,
  }),
} as const satisfies Record<Exclude<LaterEntryPointVersion, "0.9">, Create2Deployment>;
