// Fees for an operation whose client sent none: the paymaster signature covers them, so the service picks them and
// returns them with the gas limits.
import { BaseError, hexToBigInt, type PublicClient, RpcRequestError } from "viem";
import { chainClient } from "../chain/chainClient";
import type { SponsoringChain } from "../chain/sponsoringChains";
import { bundlerFees } from "./gasEstimationBundler";
import { describeTransportError, EstimationUnavailableError } from "./gasEstimationErrors";

export interface Fees {
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

/**
 * Room above the latest base fee: twice it survives six full blocks in a row (+12.5 % each) before the operation is
 * priced out. The operation pays base fee + tip, never maxFeePerGas itself, so the room costs nothing when unused.
 */
const BASE_FEE_MULTIPLIER = 2n;

/** The node's suggestion: `eth_maxPriorityFeePerGas` over the latest base fee; `eth_gasPrice` where there is none. */
async function chainFees(client: PublicClient, timeoutMs: number): Promise<Fees> {
  try {
    const [block, tip] = await Promise.all([client.getBlock({ blockTag: "latest" }), maxPriorityFee(client)]);
    const baseFee = block.baseFeePerGas;
    if (baseFee === null || baseFee === undefined) {
      const gasPrice = await client.getGasPrice();
      return { maxFeePerGas: gasPrice, maxPriorityFeePerGas: gasPrice };
    }
    const priority = tip ?? maxOf(0n, (await client.getGasPrice()) - baseFee);
    return { maxFeePerGas: BASE_FEE_MULTIPLIER * baseFee + priority, maxPriorityFeePerGas: priority };
  } catch (error) {
    throw new EstimationUnavailableError(
      `the chain's node could not suggest fees: ${describeTransportError(error, timeoutMs)}`,
    );
  }
}

/** Undefined when the node does not offer the method (it is not in every client); transport failures throw. */
async function maxPriorityFee(client: PublicClient): Promise<bigint | undefined> {
  try {
    return hexToBigInt(await client.request({ method: "eth_maxPriorityFeePerGas" }));
  } catch (error) {
    if (error instanceof BaseError && error.walk((cause) => cause instanceof RpcRequestError)) return undefined;
    throw error;
  }
}

function maxOf(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}

/**
 * The bundler's suggestion when the chain has a bundler that gives one (its prices are the ones it accepts), else the
 * node's. Throws EstimationUnavailableError when neither can answer.
 */
export async function suggestFees(chain: SponsoringChain, nodeTimeoutMs: number): Promise<Fees> {
  if (chain.bundlerUrl) {
    const fromBundler = await bundlerFees(chain.bundlerUrl).catch((error: unknown) => {
      if (chain.rpcUrl) return undefined; // the node can still answer
      throw error;
    });
    if (fromBundler) return fromBundler;
  }
  const client = chainClient(chain);
  if (!client) throw new EstimationUnavailableError("the chain's bundler suggests no fees and the chain has no RPC");
  return chainFees(client, nodeTimeoutMs);
}
