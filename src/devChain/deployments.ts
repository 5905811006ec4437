// Where each contract lands when deployed through the CREATE2 deployer: computed from the artifacts alone, so the service
// knows its addresses without a deployment record, and the same bytecode and arguments give the same address anywhere.
import { type Address, concat, encodeAbiParameters, type Hex } from "viem";
import { ENTRY_POINT_V06_ADDRESS } from "../bindings/entryPoints/entryPoint";
import { ENTRY_POINT_V07_ADDRESS, ENTRY_POINT_V08_ADDRESS } from "../bindings/entryPoints/entryPointV07";
import {
  type Artifact,
  entryPointArtifact,
  simpleAccountFactoryArtifact,
  verifyingPaymasterArtifact,
  verifyingPaymasterV07Artifact,
} from "../bindings/paymasters/artifacts";
import { paymasterInitCode } from "../bindings/paymasters/ourPaymasters";
import { permitTokenPaymasterV07Artifact, tokenPaymasterV07Artifact } from "../bindings/paymasters/tokenArtifacts";
import { CREATE2_PROXY_ADDRESS, create2Address, OUR_SALT } from "../chain/create2";
import type { LaterEntryPointVersion } from "../config";

/** The deterministic deployment proxy anvil predeploys (and most public chains carry). Its call data is salt ++ initCode. */
export const CREATE2_DEPLOYER_ADDRESS: Address = CREATE2_PROXY_ADDRESS;
export const CREATE2_SALT: Hex = OUR_SALT;

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

function create2(name: string, initCode: Hex): Create2Deployment {
  return { name, initCode, address: create2Address(initCode) };
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

/**
 * The constructor arguments every paymaster of ours takes, in this order. No signer: the address must not depend on
 * the service's key, which the owner adds to the paymaster's signer set after deploying it.
 */
export interface PaymasterArgs {
  entryPoint: Address;
  owner: Address;
}

/** One of our paymasters through the CREATE2 deployer: its bytecode with (EntryPoint, owner). */
export function paymasterDeployment(label: string, artifact: Artifact, args: PaymasterArgs): Create2Deployment {
  return create2(label, paymasterInitCode(artifact, args.entryPoint, args.owner));
}

function verifyingPaymasterDeployment(args: PaymasterArgs): Create2Deployment {
  return paymasterDeployment("VerifyingPaymaster", verifyingPaymasterArtifact, args);
}

/** Our paymaster on a local chain: canonical EntryPoint, anvil's first account as owner. */
export const localVerifyingPaymasterDeployment = verifyingPaymasterDeployment({
  entryPoint: ENTRY_POINT_V06_ADDRESS,
  owner: ANVIL_FIRST_ACCOUNT,
});

/** Moves whenever the contract's bytecode changes (not its comments: the build embeds no metadata hash). */
export const LOCAL_VERIFYING_PAYMASTER_ADDRESS: Address = localVerifyingPaymasterDeployment.address;

/**
 * One of our v0.7 contracts on a local chain for EntryPoint v0.7 and for v0.8, anvil's first account as owner: one
 * contract, one deployment per EntryPoint, with the same constructor arguments (EntryPoint, owner) and salt as the v0.6
 * one, so that the EntryPoint argument alone tells the versions' addresses apart.
 */
function atV07AndV08(name: string, artifact: Artifact) {
  const at = (entryPoint: Address) =>
    paymasterDeployment(`${name} for EntryPoint ${entryPoint}`, artifact, { entryPoint, owner: ANVIL_FIRST_ACCOUNT });
  return { "0.7": at(ENTRY_POINT_V07_ADDRESS), "0.8": at(ENTRY_POINT_V08_ADDRESS) } as const satisfies Record<
    Exclude<LaterEntryPointVersion, "0.9">,
    Create2Deployment
  >;
}

/** Our verifying paymasters for EntryPoint v0.7 and v0.8, at their canonical addresses. */
export const localVerifyingPaymasterV07Deployments = atV07AndV08(
  "VerifyingPaymasterV07",
  verifyingPaymasterV07Artifact,
);

/** Our token paymasters (ERC20 mode, charged in postOp) for EntryPoint v0.7 and v0.8. */
export const localTokenPaymasterV07Deployments = atV07AndV08("TokenPaymasterV07", tokenPaymasterV07Artifact);

/**
 * Our up-front token paymasters for EntryPoint v0.7 and v0.8: the maximum charged in validation, with an optional
 * permit, and the rest refunded in postOp.
 */
export const localPermitTokenPaymasterV07Deployments = atV07AndV08(
  "PermitTokenPaymasterV07",
  permitTokenPaymasterV07Artifact,
);
