// The L1 part of preVerificationGas on a rollup: what the bundler pays on L1 for the bytes of its handleOps
// transaction, turned into gas of the operation, plus the chain's margin. The EntryPoint pays the bundler
// preVerificationGas × min(maxFeePerGas, baseFee + maxPriorityFeePerGas) for what it cannot meter, so:
//
//   op-stack  ⌈(getL1Fee(tx) + operator fee) × (100 + margin) / (100 × that price)⌉
//   arbitrum  ⌈gasEstimateForL1 × (100 + margin) / 100⌉ (already gas: Arbitrum charges it inside the gas limit)
//
// The reading starts beside the gas simulation (one more eth_call, in parallel); the division waits for the fees.
import type { Address } from "viem";
import type { UserOperation } from "../bindings/entryPoints/userOperation";
import type { UserOperationV07 } from "../bindings/entryPoints/userOperationV07";
import { chainClient } from "../chain/chainClient";
import {
  type ComputedL1Model,
  type L1FeeReading,
  L1FeeUnreadableError,
  operatorFeeOf,
  readL1Fee,
} from "../chain/l1DataFee";
import type { SponsoringChain } from "../chain/sponsoringChains";
import { EstimationUnavailableError, OperationRevertedError } from "./gasEstimationErrors";
import type { Fees } from "./gasEstimationFees";
import { DUMMY_SIGNATURE } from "./gasEstimationStub";
import { handleOpsCalldata, serializedHandleOps, withRealisticSignatures } from "./handleOpsTransaction";

/** A reading under way, with the model it is for. */
export interface PendingL1Fee {
  model: ComputedL1Model;
  reading: Promise<L1FeeReading>;
}

/**
 * Gas values of the operation priced before they are known: four bytes each, at least any real limit's size, so the
 * transaction priced is never smaller than the one sent (fees: eight bytes, above any real fee in wei's size). Each is
 * different and looks random, as real values do: equal ones would compress, and price the transaction low.
 */
const GAS_PLACEHOLDERS = [0xc3a5e817n, 0x9b2f6d41n, 0xe47c1a93n, 0xa8d3f25bn, 0xd16b9e3fn] as const;
const FEE_PLACEHOLDERS = [0xf3b81c2e9a47d65bn, 0xc95e2a7d13f8b46en] as const;

/** The chain's model when the service computes it, else undefined (no L1 fee, or only the chain's bundler knows it). */
function computedL1Model(chain: SponsoringChain): ComputedL1Model | undefined {
  const model = chain.l1DataFee;
  return model?.model === "op-stack" || model?.model === "arbitrum" ? model : undefined;
}

/**
 * Starts reading the L1 fee of the bundle transaction carrying `op` (its gas values are replaced by placeholders and
 * its signatures by incompressible bytes of the same length); undefined where the chain's model needs no reading.
 * `nowMs` is the service's clock, which the operator fee's cache is kept by. Throws EstimationUnavailableError where
 * the model needs the node and the chain has none.
 */
export function startL1FeeReading(
  chain: SponsoringChain,
  entryPoint: Address,
  op: UserOperation | UserOperationV07,
  nowMs: number,
): PendingL1Fee | undefined {
  const model = computedL1Model(chain);
  if (!model) return undefined;
  const client = chainClient(chain);
  if (!client) {
    throw new EstimationUnavailableError(
      `its L1 data fee (${model.model}) is read through the chain's node, and the chain has no rpcUrl`,
    );
  }
  const transaction = serializedHandleOps(chain.chainId, entryPoint, handleOpsCalldata(priced(op), entryPoint));
  const reading = readL1Fee(client, model, { transaction, to: entryPoint }, nowMs).catch((error: unknown) => {
    if (error instanceof L1FeeUnreadableError) {
      throw new EstimationUnavailableError(`its L1 data fee could not be read: ${error.message}`);
    }
    throw error;
  });
  // The caller awaits it later, once its own calls are done; until then a failure must not count as unhandled.
  reading.catch(() => undefined);
  return { model, reading };
}

function priced<Op extends UserOperation | UserOperationV07>(op: Op): Op {
  const [callGas, verificationGas, preVerificationGas, paymasterVerificationGas, postOpGas] = GAS_PLACEHOLDERS;
  const placeholders = {
    callGasLimit: callGas,
    verificationGasLimit: verificationGas,
    preVerificationGas,
    maxFeePerGas: FEE_PLACEHOLDERS[0],
    maxPriorityFeePerGas: FEE_PLACEHOLDERS[1],
  };
  const later =
    "paymasterAndData" in op
      ? {}
      : { paymasterVerificationGasLimit: paymasterVerificationGas, paymasterPostOpGasLimit: postOpGas };
  return withRealisticSignatures({ ...op, ...placeholders, ...later }, DUMMY_SIGNATURE);
}

/**
 * The L1 part in gas of the operation, at its fees. `meteredGas` is the gas the bundle transaction may use (the
 * operation's limits and the execution part of preVerificationGas), which OP stack's operator fee is charged on.
 */
export function l1DataGasOf(model: ComputedL1Model, reading: L1FeeReading, fees: Fees, meteredGas: bigint): bigint {
  const margin = BigInt(100 + model.marginPercent);
  if (reading.model === "arbitrum") return ceilDiv(reading.gasForL1 * margin, 100n);
  const feeWei = reading.l1FeeWei + operatorFeeOf(reading.operatorFee, meteredGas);
  const tipped = reading.baseFeePerGas + fees.maxPriorityFeePerGas;
  const price = smaller(fees.maxFeePerGas, tipped);
  if (price === 0n) {
    if (feeWei === 0n) return 0n;
    throw new OperationRevertedError(
      `the operation's gas price is 0, so no preVerificationGas can repay the chain's L1 data fee of ${feeWei} wei`,
    );
  }
  return ceilDiv(feeWei * margin, 100n * price);
}

function smaller(a: bigint, b: bigint): bigint {
  if (a < b) return a;
  return b;
}

function ceilDiv(a: bigint, b: bigint): bigint {
  return (a + b - 1n) / b;
}
