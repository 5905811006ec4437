// Gas limits of an EntryPoint v0.7, v0.8 or v0.9 operation sent without them (or with zeros), estimated as it will
// run: with our paymaster fields of the final length in it (their own two limits are ours to sign, not estimated
// here) and an account signature of the final length. The chain's bundler estimates where one is configured, else the
// chain's node by simulation (gasEstimationSimulationV07.ts), as for v0.6 (gasEstimation.ts). preVerificationGas is
// the larger of ours, the L1 data fee's part included (l1DataGas.ts), and the bundler's.
import type { Address, Hex } from "viem";
import type { UserOperationV07 } from "../bindings/entryPoints/userOperationV07";
import { chainClient } from "../chain/chainClient";
import type { SponsoringChain } from "../chain/sponsoringChains";
import type { LaterEntryPointVersion } from "../config";
import { GAS_ESTIMATION_TIMEOUT_MS, withDeadline, withMargin } from "./gasEstimation";
import { estimateWithBundlerV07 } from "./gasEstimationBundlerV07";
import { EstimationUnavailableError } from "./gasEstimationErrors";
import type { Fees } from "./gasEstimationFees";
import { simulateOperationGasV07 } from "./gasEstimationSimulationV07";
import { stubAccountSignature } from "./gasEstimationStub";
import { l1DataGasOf, startL1FeeReading } from "./l1DataGas";
import { preVerificationGasForV07 } from "./preVerificationGasV07";
import type { StorageOverride } from "./storageOverride";

/** The operation as the client sent it, with our stub paymaster fields and its fees: any gas limit may be missing. */
export type OperationToEstimateV07 = Omit<
  UserOperationV07,
  "callGasLimit" | "verificationGasLimit" | "preVerificationGas" | "signature"
> &
  Partial<Pick<UserOperationV07, "callGasLimit" | "verificationGasLimit" | "preVerificationGas">> &
  Fees;

export interface EstimateRequestV07 {
  chain: SponsoringChain;
  /** The service's clock when the estimate starts (ms): the L1 fee's operator-fee cache is kept by it. */
  nowMs: number;
  version: LaterEntryPointVersion;
  entryPoint: Address;
  userOp: OperationToEstimateV07;
  /** The client's account signature; `0x` or absent when it sent none (a dummy of the final length stands in). */
  signature?: Hex;
  /** Storage the estimate assumes (a quote: the token allowance the wallet will add). */
  overrides?: readonly StorageOverride[];
}

export interface GasEstimateV07 {
  callGasLimit: bigint;
  verificationGasLimit: bigint;
  preVerificationGas: bigint;
  /** What the bundler measured for the paymaster's validation, when it says (the node's estimate does not). */
  paymasterVerificationGasLimit?: bigint;
  source: "bundler" | "node";
  /** The L1 data fee's part of preVerificationGas as the service computed it (margin included); 0 where none. */
  l1DataGas: bigint;
}

/** Whether the chain can estimate a later version's gas: through its bundler or its node. */
export function canEstimateGasV07(chain: SponsoringChain): boolean {
  return chain.rpcUrl !== undefined || chain.bundlerUrl !== undefined;
}

/**
 * The three account limits the operation will be signed with. A limit the client sent is a lower bound (zero counts
 * as not sent): the estimate raises it, never lowers it. Throws OperationRevertedError when the operation fails in
 * simulation, EstimationUnavailableError when the node, the bundler or the L1 fee oracle cannot be used in time.
 */
export function estimateUserOperationGasV07(
  request: EstimateRequestV07,
  timeoutMs = GAS_ESTIMATION_TIMEOUT_MS,
): Promise<GasEstimateV07> {
  return withDeadline(estimate(request), timeoutMs);
}

async function estimate({
  chain,
  nowMs,
  version,
  entryPoint,
  userOp,
  signature,
  overrides = [],
}: EstimateRequestV07): Promise<GasEstimateV07> {
  const op: UserOperationV07 = {
    ...userOp,
    callGasLimit: userOp.callGasLimit ?? 0n,
    verificationGasLimit: userOp.verificationGasLimit ?? 0n,
    preVerificationGas: userOp.preVerificationGas ?? 0n,
    signature: stubAccountSignature(signature ?? "0x"),
  };
  const l1 = chain.rpcUrl || !chain.bundlerUrl ? startL1FeeReading(chain, entryPoint, op, nowMs) : undefined;
  let measured: { callGasLimit: bigint; verificationGasLimit: bigint; preVerificationGas: bigint };
  let paymasterVerificationGasLimit: bigint | undefined;
  if (chain.bundlerUrl) {
    const fromBundler = await estimateWithBundlerV07(chain.bundlerUrl, entryPoint, op);
    measured = fromBundler;
    paymasterVerificationGasLimit = fromBundler.paymasterVerificationGasLimit;
  } else {
    const client = chainClient(chain);
    if (!client) throw new EstimationUnavailableError(`chain ${chain.chainId} has no RPC or bundler to estimate with`);
    const simulated = await simulateOperationGasV07(client, version, entryPoint, op, overrides);
    measured = {
      callGasLimit: withMargin(simulated.executionGas),
      verificationGasLimit: withMargin(simulated.verificationGas),
      preVerificationGas: 0n,
    };
  }
  const callGasLimit = atLeast(measured.callGasLimit, userOp.callGasLimit);
  const verificationGasLimit = atLeast(measured.verificationGasLimit, userOp.verificationGasLimit);
  const formula = preVerificationGasForV07({ ...op, callGasLimit, verificationGasLimit });
  const metered =
    callGasLimit +
    verificationGasLimit +
    (op.paymasterVerificationGasLimit ?? 0n) +
    (op.paymasterPostOpGasLimit ?? 0n) +
    formula;
  const l1DataGas = l1 ? l1DataGasOf(l1.model, await l1.reading, userOp, metered) : 0n;
  const preVerificationGas = atLeast(
    atLeast(formula + l1DataGas, measured.preVerificationGas),
    userOp.preVerificationGas,
  );
  return {
    callGasLimit,
    verificationGasLimit,
    preVerificationGas,
    ...(paymasterVerificationGasLimit === undefined ? {} : { paymasterVerificationGasLimit }),
    source: chain.bundlerUrl ? "bundler" : "node",
    l1DataGas,
  };
}

function atLeast(estimated: bigint, given: bigint | undefined): bigint {
  return given !== undefined && given > estimated ? given : estimated;
}
