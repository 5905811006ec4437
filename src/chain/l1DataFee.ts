// Reading a rollup's L1 data fee for one transaction from the chain's node: what the bundler will pay on L1 for the
// bytes of its handleOps transaction, which preVerificationGas must pay back.
//
//   op-stack  the GasPriceOracle predeploy: getL1Fee(tx) in wei, taken from the sender's balance outside gas, and since
//             Isthmus getOperatorFee(gasUsed); an oracle without that function charges none. The latest block's base
//             fee comes along, since the operation's price is min(maxFeePerGas, baseFee + maxPriorityFeePerGas).
//   arbitrum  NodeInterface's gasEstimateL1Component: the L1 "poster" cost already in L2 gas, charged inside the limit.
//
// The calls go out side by side, each bounded like every node call; any failure is an L1FeeUnreadableError, never a
// zero: a signature priced without the fee loses the bundler money. The operator fee's settings are kept a minute.
import {
  type Address,
  BaseError,
  decodeFunctionResult,
  encodeFunctionData,
  type Hex,
  hexToBigInt,
  type PublicClient,
  parseAbi,
  RpcRequestError,
  size,
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

/**
 * How long a reading of an OP-stack chain's operator fee is kept. Its scalar and constant are the chain operator's
 * settings, changed by a system transaction now and then, never per block; reading them once a minute instead of with
 * every estimate saves two calls (and on chains without the fee, two reverted calls) per sponsorship.
 */
const OPERATOR_FEE_TTL_MS = 60_000;

const operatorFees = new Map<string, { at: number; fee: Promise<OperatorFee> }>();

/**
 * Reads the transaction's L1 fee. `nowMs` is the service's clock (its context's `now`), by which the operator fee's
 * reading is kept OPERATOR_FEE_TTL_MS.
 */
export async function readL1Fee(
  client: PublicClient,
  model: ComputedL1Model,
  question: L1FeeQuestion,
  nowMs: number,
): Promise<L1FeeReading> {
  const oracle = model.oracle as Address;
  const place = model.model === "op-stack" ? `GasPriceOracle ${oracle}` : `NodeInterface ${oracle}`;
  try {
    if (model.model === "arbitrum") {
      const data = encodeFunctionData({
        abi: nodeInterfaceAbi,
        functionName: "gasEstimateL1Component",
        args: [question.to, false, question.transaction],
      });
      const [gasForL1] = decodeFunctionResult({
        abi: nodeInterfaceAbi,
        functionName: "gasEstimateL1Component",
        data: await call(client, oracle, data),
      });
      return { model: "arbitrum", gasForL1 };
    }
    const getL1Fee = encodeFunctionData({
      abi: opStackOracleAbi,
      functionName: "getL1Fee",
      args: [question.transaction],
    });
    const [l1Fee, operatorFee, baseFeePerGas] = await Promise.all([
      call(client, oracle, getL1Fee),
      cachedOperatorFee(client, oracle, nowMs),
      latestBaseFee(client),
    ]);
    return { model: "op-stack", l1FeeWei: hexToBigInt(l1Fee), operatorFee, baseFeePerGas };
  } catch (error) {
    if (error instanceof L1FeeUnreadableError) throw new L1FeeUnreadableError(`${place} ${error.message}`);
    throw new L1FeeUnreadableError(
      `${place} could not be read: ${describeTransportError(error, CHAIN_RPC_TIMEOUT_MS)}`,
    );
  }
}

/**
 * One eth_call through the client's transport, without viem's contract layer: its error objects cost milliseconds of
 * CPU to build on every revert, and this runs with every estimate. An empty answer means no code at the address.
 */
async function call(client: PublicClient, to: Address, data: Hex): Promise<Hex> {
  const result = await client.request({ method: "eth_call", params: [{ to, data }, "latest"] });
  if (result === "0x" || size(result) === 0) {
    throw new L1FeeUnreadableError("could not be read: no contract answers there (the call returned no data)");
  }
  return result;
}

async function latestBaseFee(client: PublicClient): Promise<bigint> {
  const block = await client.request({ method: "eth_getBlockByNumber", params: ["latest", false] });
  if (!block?.baseFeePerGas) {
    throw new L1FeeUnreadableError(
      "cannot be used: the latest block has no base fee, which an OP-stack chain always has",
    );
  }
  return hexToBigInt(block.baseFeePerGas);
}

/** The oracle's operator fee, kept OPERATOR_FEE_TTL_MS; concurrent estimates share one reading. */
function cachedOperatorFee(client: PublicClient, oracle: Address, nowMs: number): Promise<OperatorFee> {
  const key = `${client.transport.url ?? client.uid}|${oracle.toLowerCase()}`;
  const kept = operatorFees.get(key);
  if (kept && nowMs - kept.at < OPERATOR_FEE_TTL_MS) return kept.fee;
  const fee = readOperatorFee(client, oracle);
  operatorFees.set(key, { at: nowMs, fee });
  // A failed reading is not kept: the next estimate asks again.
  fee.catch(() => operatorFees.delete(key));
  return fee;
}

/**
 * getOperatorFee at no gas and at a million gas where the oracle has it (Isthmus on); an oracle that reverts on it
 * predates the fee, and none is charged.
 */
async function readOperatorFee(client: PublicClient, oracle: Address): Promise<OperatorFee> {
  const at = async (gas: bigint) =>
    hexToBigInt(
      await call(
        client,
        oracle,
        encodeFunctionData({ abi: opStackOracleAbi, functionName: "getOperatorFee", args: [gas] }),
      ),
    );
  try {
    const [constantWei, atMillion] = await Promise.all([at(0n), at(MILLION)]);
    return { constantWei, perMillionGasWei: atMillion - constantWei };
  } catch (error) {
    if (isRevert(error)) return { constantWei: 0n, perMillionGasWei: 0n };
    throw error;
  }
}

/** A node's answer that the call reverted (JSON-RPC error 3, or -32000 with "execution reverted"). */
function isRevert(error: unknown): boolean {
  if (!(error instanceof BaseError)) return false;
  const rpc = error.walk((cause) => cause instanceof RpcRequestError);
  if (!(rpc instanceof RpcRequestError)) return false;
  return rpc.code === 3 || /revert/i.test(rpc.details);
}
