// Gas limits for an operation the client sent without them (`calculateGasLimits: true`), estimated as the operation
// will run: with our paymasterAndData (a stub of the final length: 276 bytes for the verifying paymaster, 278 for the
// token paymaster in ERC20 mode) and an account signature of the final length. The chain's bundler estimates when one
// is configured, else the service simulates through the chain's node (gasEstimationSimulation.ts). Either way the
// result covers what the stub cannot exercise: our paymaster's work on a valid signature, its postOp, and the calldata
// of our bytes in preVerificationGas.
import type { Address, Hex } from "viem";
import type { UserOperation, UserOperationSignedFields } from "../bindings/entryPoints/userOperation";
import type { SponsorshipTerms } from "../bindings/paymasters/paymasterAndData";
import { CHAIN_RPC_TIMEOUT_MS, chainClient } from "../chain/chainClient";
import type { SponsoringChain } from "../chain/sponsoringChains";
import { estimateWithBundler } from "./gasEstimationBundler";
import { EstimationUnavailableError } from "./gasEstimationErrors";
import { type Fees, suggestFees } from "./gasEstimationFees";
import { simulateOperationGas } from "./gasEstimationSimulation";
import { stubAccountSignature, stubPaymasterAndData } from "./gasEstimationStub";
import { l1DataGasOf, startL1FeeReading } from "./l1DataGas";
import { preVerificationGasFor } from "./preVerificationGas";
import type { StorageOverride } from "./storageOverride";

/** The whole estimate, every upstream call included, answers within this time (each call has its own bound too). */
export const GAS_ESTIMATION_TIMEOUT_MS = 10_000;

/**
 * Gas our paymaster spends on a valid signature that the dummy signature skips: reserving the worst case from the
 * dApp's balance (a cold read, a write, the context). Measured on anvil at 6,379 (test/chain/gasEstimation.test.ts
 * checks the figure still holds).
 */
export const PAYMASTER_SIGNED_PATH_GAS = 7_000n;

/**
 * EntryPoint v0.6 runs postOp with verificationGasLimit as its gas limit; ours and the EntryPoint's frame around it
 * take about 5,000 gas. Twice that, and above the 10,000 that bundlers require.
 */
const MIN_VERIFICATION_GAS_LIMIT = 20_000n;

/** Margins over what the node's simulation measured: +10 % and +10,000 gas on each of the two limits. */
const MARGIN_PERCENT = 10n;
const MARGIN_GAS = 10_000n;

export function withMargin(gas: bigint): bigint {
  return gas + (gas * MARGIN_PERCENT + 99n) / 100n + MARGIN_GAS;
}

/** The operation as the client sent it: any gas or fee field may be missing. */
export type OperationToEstimate = Pick<UserOperation, "sender" | "nonce" | "initCode" | "callData"> &
  Partial<Omit<UserOperationSignedFields, "sender" | "nonce" | "initCode" | "callData">>;

export interface EstimateRequest {
  chain: SponsoringChain;
  /** The service's clock when the estimate starts (ms): the L1 fee's operator-fee cache is kept by it. */
  nowMs: number;
  userOp: OperationToEstimate;
  /** The client's account signature; `0x` when it sent none (a dummy of the final length stands in). */
  signature: Hex;
  /**
   * The terms the verifying paymaster's stub carries: the dApp's funding wallet and a validity window like the one
   * that will be signed. Required unless paymasterStub is given.
   */
  terms?: SponsorshipTerms;
  /**
   * Another paymaster than the chain's verifying one (ERC20 mode: the token paymaster) with its stub paymasterAndData
   * of the final length, used instead of `terms`.
   */
  paymasterStub?: {
    paymaster: Address;
    paymasterAndData: Hex;
    /** Its validation checks the sender (the token paymaster: the sender's tokens), so its refusal is the operation's. */
    checksSender?: boolean;
  };
  /**
   * Storage the simulation assumes that the chain does not hold yet, given to the node's simulation and to the
   * bundler alike (ERC20 quotes: the token allowance the wallet will add; src/tokens/allowanceOverride.ts).
   */
  overrides?: readonly StorageOverride[];
}

export interface GasEstimate extends Fees {
  callGasLimit: bigint;
  verificationGasLimit: bigint;
  preVerificationGas: bigint;
  /** Which estimated the limits. */
  source: "bundler" | "node";
  /** The L1 data fee's part of preVerificationGas as the service computed it (margin included); 0 where none. */
  l1DataGas: bigint;
}

/** Whether the chain can estimate at all: it needs a bundler or a node, and our paymaster for the stub. */
function canEstimateGas(chain: SponsoringChain): chain is SponsoringChain & { verifyingPaymaster: Address } {
  return chain.verifyingPaymaster !== undefined && (chain.rpcUrl !== undefined || chain.bundlerUrl !== undefined);
}

/**
 * The three limits and the fees the operation will be signed with. Limits the client sent are lower bounds: an
 * estimate never lowers them. Fees the client sent are kept as they are; missing ones are suggested by the chain.
 *
 * Throws OperationRevertedError when the operation fails in simulation (the message says why), and
 * EstimationUnavailableError when the node or the bundler cannot be used, within GAS_ESTIMATION_TIMEOUT_MS.
 */
export function estimateUserOperationGas(
  request: EstimateRequest,
  timeoutMs = GAS_ESTIMATION_TIMEOUT_MS,
): Promise<GasEstimate> {
  return withDeadline(estimate(request), timeoutMs);
}

async function estimate({
  chain,
  nowMs,
  userOp,
  signature,
  terms,
  paymasterStub,
  overrides = [],
}: EstimateRequest): Promise<GasEstimate> {
  if (paymasterStub ? !chain.rpcUrl && !chain.bundlerUrl : !canEstimateGas(chain)) {
    throw new EstimationUnavailableError(
      `chain ${chain.chainId} has no bundler, node or verifying paymaster to estimate with`,
    );
  }
  if (!paymasterStub && !terms) throw new TypeError("estimate: terms or paymasterStub is required");
  const paymaster = paymasterStub?.paymaster ?? (chain.verifyingPaymaster as Address);
  const paymasterAndData =
    paymasterStub?.paymasterAndData ?? stubPaymasterAndData({ ...(terms as SponsorshipTerms), paymaster });
  const feesGiven = userOp.maxFeePerGas !== undefined && userOp.maxPriorityFeePerGas !== undefined;
  const fees = feesGiven ? undefined : suggestFees(chain, CHAIN_RPC_TIMEOUT_MS);
  const op = (chosen: Fees): UserOperation => ({
    sender: userOp.sender,
    nonce: userOp.nonce,
    initCode: userOp.initCode,
    callData: userOp.callData,
    callGasLimit: userOp.callGasLimit ?? 0n,
    verificationGasLimit: userOp.verificationGasLimit ?? 0n,
    preVerificationGas: userOp.preVerificationGas ?? 0n,
    ...chosen,
    paymasterAndData,
    signature: stubAccountSignature(signature),
  });

  // The L1 fee's reading goes out now, beside the simulation or the bundler's estimate (l1DataGas.ts). Without a node
  // the chain's bundler, whose estimate carries the fee, is the only one to ask.
  const l1 =
    chain.rpcUrl || !chain.bundlerUrl
      ? startL1FeeReading(chain, chain.entryPoint, op({ maxFeePerGas: 0n, maxPriorityFeePerGas: 0n }), nowMs)
      : undefined;
  let stub: UserOperation;
  let limits: { callGasLimit: bigint; verificationGasLimit: bigint; preVerificationGas: bigint };
  if (chain.bundlerUrl) {
    // The bundler is sent the fees the operation will carry, so they are chosen first.
    stub = op(completeFees(userOp, await fees));
    const fromBundler = await estimateWithBundler(chain.bundlerUrl, chain.entryPoint, stub, {
      overrides,
      paymasterChecksSender: paymasterStub?.checksSender === true,
    });
    limits = {
      callGasLimit: fromBundler.callGasLimit,
      // The bundler simulated our paymaster with the dummy signature, which skips the reservation.
      verificationGasLimit: fromBundler.verificationGasLimit + PAYMASTER_SIGNED_PATH_GAS,
      preVerificationGas: fromBundler.preVerificationGas,
    };
  } else {
    const client = chainClient(chain);
    if (!client) throw new EstimationUnavailableError(`chain ${chain.chainId} has no RPC`);
    // The simulation prices gas at 1 wei whatever the fees, so it need not wait for them.
    const placeholder = op({ maxFeePerGas: 0n, maxPriorityFeePerGas: 0n });
    const [measured, chosenFees] = await Promise.all([
      simulateOperationGas(client, chain.entryPoint, paymaster, placeholder, overrides),
      fees,
    ]);
    stub = op(completeFees(userOp, chosenFees));
    limits = {
      callGasLimit: withMargin(measured.executionGas),
      verificationGasLimit: withMargin(measured.verificationGas + PAYMASTER_SIGNED_PATH_GAS),
      preVerificationGas: 0n,
    };
  }

  const callGasLimit = maxOf(limits.callGasLimit, userOp.callGasLimit);
  const verificationGasLimit = maxOf(
    maxOf(limits.verificationGasLimit, MIN_VERIFICATION_GAS_LIMIT),
    userOp.verificationGasLimit,
  );
  // Our rules over the final shape, whatever the bundler said: they cover our 276 (or 278) bytes as every bundler
  // prices them (preVerificationGas.ts).
  const formula = preVerificationGasFor({ ...stub, callGasLimit, verificationGasLimit });
  const l1DataGas = l1
    ? l1DataGasOf(l1.model, await l1.reading, stub, callGasLimit + verificationGasLimit + formula)
    : 0n;
  const preVerificationGas = maxOf(maxOf(formula + l1DataGas, limits.preVerificationGas), userOp.preVerificationGas);
  return {
    callGasLimit,
    verificationGasLimit,
    preVerificationGas,
    maxFeePerGas: stub.maxFeePerGas,
    maxPriorityFeePerGas: stub.maxPriorityFeePerGas,
    source: chain.bundlerUrl ? "bundler" : "node",
    l1DataGas,
  };
}

/** The client's fees where it sent them, the suggestion for the rest; the tip never above the fee cap. */
function completeFees(userOp: OperationToEstimate, suggested: Fees | undefined): Fees {
  const maxFeePerGas = userOp.maxFeePerGas ?? suggested?.maxFeePerGas ?? 0n;
  const tip = userOp.maxPriorityFeePerGas ?? suggested?.maxPriorityFeePerGas ?? 0n;
  return { maxFeePerGas, maxPriorityFeePerGas: tip > maxFeePerGas ? maxFeePerGas : tip };
}

function maxOf(a: bigint, b: bigint | undefined): bigint {
  return b !== undefined && b > a ? b : a;
}

export function withDeadline<T>(work: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new EstimationUnavailableError(`gas estimation did not finish within ${timeoutMs} ms`)),
      timeoutMs,
    );
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}
