// The one place the sponsorship rules read fields that differ between EntryPoint versions. Rules see an operation
// through this view (sender, nonce, callData, whether it deploys an account, its worst-case cost, its webhook JSON),
// so a rule written once decides v0.6, v0.7 and v0.8 operations alike.
import type { Address, Hex } from "viem";
import { maxChargeWei, worstCaseCostWei, worstCaseCostWeiV07 } from "../bindings/entryPoints/prefund";
import { isEip7702Marker } from "../bindings/entryPoints/userOperationV07";
import { FEE_FIELDS, GAS_LIMIT_FIELDS, type PartialUserOperation } from "./partialUserOperation";
import type { EntryPointVersion, PartialUserOperationV07, SponsoredUserOperation } from "./partialUserOperationV07";

export interface OperationView {
  entryPointVersion: EntryPointVersion;
  sender: Address;
  nonce: bigint;
  callData: Hex;
  /**
   * What in the operation would create or install the account, undefined when it names nothing of the kind. Whether
   * it does deploy depends on the sender's code too: src/sponsorship/senderDeployment.ts decides.
   */
  deployment: NamedDeployment | undefined;
}

/** A deployment an operation names, with `what`: its words for a refusal ("initCode", "a factory", …). */
export type NamedDeployment =
  /** v0.6 initCode or a later version's factory: creates the account where the sender has no code. */
  | { kind: "factory"; what: string }
  /** v0.8 and later: an EIP-7702 authorization installs `delegate` as the sender EOA's code. */
  | { kind: "eip7702Authorization"; what: string; delegate: Address }
  /** v0.8 and later: data after the 0x7702 marker, the EntryPoint's initialisation call into the delegated account. */
  | { kind: "eip7702Initialisation"; what: string };

/** Tells a v0.6 operation from a v0.7/v0.8 one (the later versions carry their version). */
const isV06 = (op: SponsoredUserOperation): op is PartialUserOperation => !("entryPointVersion" in op);

export function viewOf(op: SponsoredUserOperation): OperationView {
  const common = { sender: op.sender, nonce: op.nonce, callData: op.callData };
  if (isV06(op))
    return {
      entryPointVersion: "0.6",
      ...common,
      deployment: op.initCode === "0x" ? undefined : { kind: "factory", what: "initCode" },
    };
  return { entryPointVersion: op.entryPointVersion, ...common, deployment: deploymentV07(op) };
}

/**
 * v0.7: a factory names the account's deployment. v0.8 and later add EIP-7702: an authorization installs code on the sender's EOA, which
 * is that account's deployment; the marker factory `0x7702` alone only says the EOA already has such code (the
 * EntryPoint then hashes the delegate in), and with factoryData after it the EntryPoint first calls the account with
 * that data to initialise it, which is a deployment's second half and counted as one.
 */
function deploymentV07(op: PartialUserOperationV07): NamedDeployment | undefined {
  if (op.entryPointVersion !== "0.7") {
    if (op.eip7702Auth) {
      return { kind: "eip7702Authorization", what: "an EIP-7702 authorization", delegate: op.eip7702Auth.address };
    }
    if (op.factory && isEip7702Marker(op.factory)) {
      return op.factoryData && op.factoryData !== "0x"
        ? {
            kind: "eip7702Initialisation",
            what: "an EIP-7702 initialisation (factoryData after the 0x7702 marker)",
          }
        : undefined;
    }
  }
  return op.factory && op.factory !== "0x" ? { kind: "factory", what: "a factory" } : undefined;
}

/**
 * The most the operation can cost in wei, what a NATIVE_ASSET spending limit reserves: for v0.6 (callGasLimit + 3 ×
 * verificationGasLimit + preVerificationGas) × maxFeePerGas, for v0.7 and v0.8 the EntryPoint's prefund (see
 * worstCaseCostWeiV07). The rules run on operations whose gas is complete; a missing field is a bug of the caller.
 */
export function worstCaseCost(op: SponsoredUserOperation): bigint {
  if (isV06(op)) return worstCaseCostWei(gasOf(op, V06_GAS));
  return worstCaseCostWeiV07(gasOf(op, V07_GAS));
}

/**
 * What the operation can take from the paymaster's deposit at most: v0.6 adds the postOp's overhead to the worst case
 * (maxChargeWei); in v0.7 and v0.8 the prefund already holds the postOp's own limit, so it is the worst case itself.
 */
export function maxDepositCharge(op: SponsoredUserOperation): bigint {
  if (isV06(op)) return maxChargeWei(gasOf(op, V06_GAS));
  return worstCaseCostWeiV07(gasOf(op, V07_GAS));
}

/** The fields each version's worst case reads. */
const V06_GAS = ["callGasLimit", "verificationGasLimit", "preVerificationGas", "maxFeePerGas"] as const;
const V07_GAS = [
  "verificationGasLimit",
  "callGasLimit",
  "paymasterVerificationGasLimit",
  "paymasterPostOpGasLimit",
  "preVerificationGas",
  "maxFeePerGas",
] as const;

type GasField = (typeof V07_JSON_GAS)[number];
type Gas = Partial<Record<GasField, bigint>>;

function gasOf<Field extends GasField>(op: SponsoredUserOperation, fields: readonly Field[]): Record<Field, bigint> {
  const gas = {} as Record<Field, bigint>;
  const given: Gas = op;
  for (const field of fields) {
    const value = given[field];
    if (value === undefined) throw new Error(`the operation's worst-case cost needs ${field}, which it lacks`);
    gas[field] = value;
  }
  return gas;
}

/**
 * The operation as a WEBHOOK rule receives it: its version's own fields (v0.6 initCode; v0.7 and v0.8 factory,
 * factoryData and the paymaster's gas limits; v0.8 eip7702Auth), numbers in decimal, absent fields left out.
 */
export function operationJson(op: SponsoredUserOperation): Record<string, string | Record<string, string>> {
  const json: Record<string, string | Record<string, string>> = { sender: op.sender, nonce: op.nonce.toString() };
  if (isV06(op)) json.initCode = op.initCode;
  else {
    json.entryPointVersion = op.entryPointVersion;
    if (op.factory !== undefined) json.factory = op.factory;
    if (op.factoryData !== undefined) json.factoryData = op.factoryData;
  }
  json.callData = op.callData;
  const gasFields = isV06(op) ? V06_JSON_GAS : V07_JSON_GAS;
  const gas: Gas = op;
  for (const field of gasFields) {
    const value = gas[field];
    if (value !== undefined) json[field] = value.toString();
  }
  if (!isV06(op) && op.eip7702Auth) {
    const auth = op.eip7702Auth;
    json.eip7702Auth = {
      chainId: auth.chainId.toString(),
      address: auth.address,
      nonce: auth.nonce.toString(),
      yParity: String(auth.yParity),
      r: auth.r,
      s: auth.s,
    };
  }
  return json;
}

const V06_JSON_GAS = [...GAS_LIMIT_FIELDS, ...FEE_FIELDS] as const;
const V07_JSON_GAS = [...V06_JSON_GAS, "paymasterVerificationGasLimit", "paymasterPostOpGasLimit"] as const;
