// Reading a rollup's L1 data fee for one transaction from the chain's node: what the bundler will pay on L1 for the
// bytes of its handleOps transaction, which preVerificationGas must pay back.
//
//   op-stack  the GasPriceOracle predeploy: getL1Fee(tx) in wei, taken from the sender's balance outside gas, and since
//             Isthmus getOperatorFee(gasUsed); an oracle without that function charges none. The latest block's base
//             fee comes along, since the operation's price is min(maxFeePerGas, baseFee + maxPriorityFeePerGas).
//   arbitrum  NodeInterface's gasEstimateL1Component: the L1 "poster" cost already in L2 gas, charged inside the limit.
//
// The calls go out side by side, each bounded like every node call; any failure is an L1FeeUnreadableError, never a
// zero: a signature priced without the fee loses the bundler money.
import {
  type Address,
  BaseError,
  ContractFunctionRevertedError,
  ContractFunctionZeroDataError,
  type Hex,
  type PublicClient,
  parseAbi,
} from "viem";
import type { L1DataFeeConfig } from "../config";
import { CHAIN_RPC_TIMEOUT_MS } from "./chainClient";
import { describeTransportError } from "./transportError";

const opStackOracleAbi = parseAbi([
  "function getL1Fee(bytes data) view returns (uint256)",
  "function getOperatorFee(uint256 gasUsed) view returns (uint256)",
]);

const nodeInterfaceAbi = parseAbi([
  "function gasEstimateL1Component(address to, bool contractCreation, bytes data) returns (uint64 gasEstimateForL1, uint256 baseFee, uint256 l1BaseFeeEstimate)",
]);

export type ComputedL1Model = Extract<L1DataFeeConfig, { model: "op-stack" | "arbitrum" }>;

/** What the node said of the transaction's L1 cost. */
export type L1FeeReading =
  | { model: "op-stack"; l1FeeWei: bigint; operatorFee: OperatorFee; baseFeePerGas: bigint }
  | { model: "arbitrum"; gasForL1: bigint };

/**
 * OP stack's operator fee, linear in the gas the transaction uses (Isthmus: gasUsed × scalar / 1e6 + constant): read at
 * no gas and at a million gas, so that the fee of any gas figure follows without asking again.
 */
export interface OperatorFee {
  constantWei: bigint;
  perMillionGasWei: bigint;
}

/** The operator fee of `gas`, rounded up. */
export function operatorFeeOf(fee: OperatorFee, gas: bigint): bigint {
  return fee.constantWei + (fee.perMillionGasWei * gas + MILLION - 1n) / MILLION;
}

const MILLION = 1_000_000n;

/** The fee could not be read; the message names the oracle and what happened, never the node's URL. */
export class L1FeeUnreadableError extends Error {
  override name = "L1FeeUnreadableError";
}

export interface L1FeeQuestion {
  /** The serialized handleOps transaction (src/gasEstimation/handleOpsTransaction.ts). */
  transaction: Hex;
  /** Where it goes: the EntryPoint. */
  to: Address;
}

export async function readL1Fee(
  client: PublicClient,
  model: ComputedL1Model,
  question: L1FeeQuestion,
): Promise<L1FeeReading> {
  const oracle = model.oracle as Address;
  const place = model.model === "op-stack" ? `GasPriceOracle ${oracle}` : `NodeInterface ${oracle}`;
  try {
    if (model.model === "arbitrum") {
      const { result } = await client.simulateContract({
        address: oracle,
        abi: nodeInterfaceAbi,
        functionName: "gasEstimateL1Component",
        args: [question.to, false, question.transaction],
      });
      return { model: "arbitrum", gasForL1: result[0] };
    }
    const [l1FeeWei, operatorFee, block] = await Promise.all([
      client.readContract({
        address: oracle,
        abi: opStackOracleAbi,
        functionName: "getL1Fee",
        args: [question.transaction],
      }),
      readOperatorFee(client, oracle),
      client.getBlock({ blockTag: "latest" }),
    ]);
    const baseFeePerGas = block.baseFeePerGas;
    if (baseFeePerGas === null || baseFeePerGas === undefined) {
      throw new L1FeeUnreadableError(`the latest block has no base fee, which an OP-stack chain always has`);
    }
    return { model: "op-stack", l1FeeWei, operatorFee, baseFeePerGas };
  } catch (error) {
    if (error instanceof L1FeeUnreadableError) throw new L1FeeUnreadableError(`${place}: ${error.message}`);
    throw new L1FeeUnreadableError(`${place} could not be read: ${whatFailed(error)}`);
  }
}

/** getOperatorFee where the oracle has it (Isthmus on); an oracle that reverts on it predates the fee: none is charged. */
async function readOperatorFee(client: PublicClient, oracle: Address): Promise<OperatorFee> {
  const at = (gas: bigint) =>
    client.readContract({ address: oracle, abi: opStackOracleAbi, functionName: "getOperatorFee", args: [gas] });
  try {
    const [constantWei, atMillion] = await Promise.all([at(0n), at(MILLION)]);
    return { constantWei, perMillionGasWei: atMillion - constantWei };
  } catch (error) {
    if (error instanceof BaseError && error.walk((cause) => cause instanceof ContractFunctionRevertedError)) {
      return { constantWei: 0n, perMillionGasWei: 0n };
    }
    throw error;
  }
}

function whatFailed(error: unknown): string {
  if (error instanceof BaseError && error.walk((cause) => cause instanceof ContractFunctionZeroDataError)) {
    return "no contract answers there (the call returned no data)";
  }
  return describeTransportError(error, CHAIN_RPC_TIMEOUT_MS);
}
