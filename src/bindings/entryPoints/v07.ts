// EntryPoint v0.7 and v0.8 for the sponsorship engine: the unpacked operation (factory, the paymaster's two gas limits
// beside the account's), packed for the hashes; our paymaster's part is paymaster + its two limits + paymasterData.
// The two versions differ only in the user operation hash (v0.8's is EIP-712, and reads EIP-7702 authorizations).
import type { Address } from "viem";
import type { PartialUserOperationV07 } from "../../sponsorship/partialUserOperationV07";
import type { PaymasterGasLimits } from "../paymasters/paymasterAndDataV07";
import type { EntryPointVersion } from "./entryPointVersion";
import {
  decimalFields,
  FEE_FIELDS,
  GAS_LIMIT_FIELDS,
  type NamedDeployment,
  type OperationJson,
  requiredGas,
} from "./operationReading";
import { paymasterHashPrefixWords } from "./packedUserOperation";
import { worstCaseCostWeiV07 } from "./prefund";
import { type EntryPointVersionV07, getUserOpHashV07, isEip7702Marker, packUserOperation } from "./userOperationV07";

/** A v0.7/v0.8 operation with every field our signature covers, the paymaster's two gas limits included. */
export type SignableUserOperationV07 = PartialUserOperationV07 &
  PaymasterGasLimits &
  Required<
    Pick<
      PartialUserOperationV07,
      "callGasLimit" | "verificationGasLimit" | "preVerificationGas" | "maxFeePerGas" | "maxPriorityFeePerGas"
    >
  >;

const paymasterGasOf = (op: SignableUserOperationV07): PaymasterGasLimits => ({
  paymasterVerificationGasLimit: op.paymasterVerificationGasLimit,
  paymasterPostOpGasLimit: op.paymasterPostOpGasLimit,
});

/** The gas fields the prefund reads: the paymaster's own limits among them. */
const PREFUND_GAS = [
  "verificationGasLimit",
  "callGasLimit",
  "paymasterVerificationGasLimit",
  "paymasterPostOpGasLimit",
  "preVerificationGas",
  "maxFeePerGas",
] as const;
const WEBHOOK_GAS = [...GAS_LIMIT_FIELDS, ...FEE_FIELDS, "paymasterVerificationGasLimit", "paymasterPostOpGasLimit"];

/**
 * The later EntryPoints, one implementation with the version as its parameter (registered in versions.ts).
 * `readsEip7702`: v0.8 on, an EIP-7702 authorization and the 0x7702 marker factory mean something.
 */
export function entryPointV07(
  name: EntryPointVersionV07,
  canonicalAddress: Address,
  readsEip7702: boolean,
): EntryPointVersion<SignableUserOperationV07> {
  const prefund = (op: PartialUserOperationV07) => worstCaseCostWeiV07(requiredGas(op, PREFUND_GAS));
  return {
    name,
    canonicalAddress,
    view: (op: PartialUserOperationV07) => ({
      sender: op.sender,
      nonce: op.nonce,
      callData: op.callData,
      deployment: readsEip7702 ? deploymentWithEip7702(op) : factoryDeployment(op),
    }),
    worstCaseCostWei: prefund,
    // The prefund already holds the postOp's own limit: it is all the deposit can lose.
    depositChargeWei: prefund,
    webhookJson: webhookJson,
    answerPart: (paymaster, part, op) => ({
      paymaster: part?.paymaster ?? (paymaster as Address),
      paymasterData: part?.paymasterData ?? "0x",
      ...paymasterGasOf(op),
    }),
    paymasterHashPrefix: (op, place) =>
      paymasterHashPrefixWords(packUserOperation({ ...op, signature: "0x" }), { ...paymasterGasOf(op), ...place }),
    userOpHash: (op, part, entryPoint, chainId) =>
      getUserOpHashV07({ ...op, ...paymasterGasOf(op), ...part, signature: "0x" }, entryPoint, chainId, name),
    prefundCountsPostOp: true,
    signsInParallel: false,
    readsBlockWindows: false,
  };
}

/** v0.7: a factory names the account's deployment. */
function factoryDeployment(op: PartialUserOperationV07): NamedDeployment | undefined {
  return op.factory && op.factory !== "0x" ? { kind: "factory", what: "a factory" } : undefined;
}

/**
 * v0.8 on, EIP-7702 too: an authorization installs code on the sender's EOA, which is that account's deployment; the
 * marker factory `0x7702` alone only says the EOA already has such code (the EntryPoint then hashes the delegate in),
 * and with factoryData after it the EntryPoint first calls the account with that data to initialise it, which is a
 * deployment's second half and counted as one.
 */
function deploymentWithEip7702(op: PartialUserOperationV07): NamedDeployment | undefined {
  if (op.eip7702Auth) {
    return { kind: "eip7702Authorization", what: "an EIP-7702 authorization", delegate: op.eip7702Auth.address };
  }
  if (op.factory && isEip7702Marker(op.factory)) {
    return op.factoryData && op.factoryData !== "0x"
      ? { kind: "eip7702Initialisation", what: "an EIP-7702 initialisation (factoryData after the 0x7702 marker)" }
      : undefined;
  }
  return factoryDeployment(op);
}

/** The operation as a WEBHOOK rule receives it: factory, factoryData, the paymaster's limits, eip7702Auth. */
function webhookJson(op: PartialUserOperationV07): OperationJson {
  const json: OperationJson = {
    sender: op.sender,
    nonce: op.nonce.toString(),
    entryPointVersion: op.entryPointVersion,
    ...(op.factory === undefined ? {} : { factory: op.factory }),
    ...(op.factoryData === undefined ? {} : { factoryData: op.factoryData }),
    callData: op.callData,
    ...decimalFields(op, WEBHOOK_GAS),
  };
  const auth = op.eip7702Auth;
  if (auth) {
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
