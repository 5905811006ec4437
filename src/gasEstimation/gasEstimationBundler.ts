// The chain's ERC-4337 bundler, when one is configured: its eth_estimateUserOperationGas runs the same EntryPoint
// simulation the bundler will later apply to the operation, with its own margins, so the estimate suits that bundler.
import { type Address, BaseError, type Client, createClient, type Hex, http, RpcRequestError, toHex } from "viem";
import type { UserOperation } from "../bindings/entryPoints/userOperation";
import { describeTransportError, EstimationUnavailableError, OperationRevertedError } from "./gasEstimationErrors";
import type { Fees } from "./gasEstimationFees";
import { type StorageOverride, toRpcStateOverride } from "./storageOverride";

/** One bundler call may take this long; its estimate simulates several times, so it gets more than a node call. */
const BUNDLER_TIMEOUT_MS = 8_000;

/** Far above any real limit: a larger number from a bundler is garbage, not an estimate. */
const MAX_REASONABLE_GAS = 10_000_000_000n;

/**
 * Bundler error codes (ERC-7769) that mean the operation itself is refused: validation reverted or was rejected,
 * the time range, the signature, the call reverted, or a malformed field. Anything else (throttled or banned entities,
 * stake, internal errors, an unknown method) is the bundler's or our paymaster's condition, not the client's.
 */
const OPERATION_REFUSED_CODES = new Set([-32500, -32502, -32503, -32506, -32507, -32521, -32602]);

/**
 * The paymaster's validation reverted or refused (-32501). Our verifying paymaster refuses for reasons of its own
 * (the dApp's deposit), which the client cannot fix; a paymaster that checks the sender (the token paymaster: its
 * tokens) refuses the operation, and the caller says so.
 */
const PAYMASTER_REFUSED_CODE = -32501;

/** The bundler does not offer a method (-32601): for optional methods, a reason to ask elsewhere. */
class MethodNotFoundError extends EstimationUnavailableError {}

const clients = new Map<string, Client>();

function bundlerClient(url: string): Client {
  let client = clients.get(url);
  if (!client) {
    client = createClient({ transport: http(url, { timeout: BUNDLER_TIMEOUT_MS, retryCount: 0 }) });
    clients.set(url, client);
  }
  return client;
}

/** The operation as bundlers take it over JSON-RPC: numbers as hex quantities. */
export function toRpcUserOperation(op: UserOperation): Record<keyof UserOperation, Hex | Address> {
  return {
    sender: op.sender,
    nonce: toHex(op.nonce),
    initCode: op.initCode,
    callData: op.callData,
    callGasLimit: toHex(op.callGasLimit),
    verificationGasLimit: toHex(op.verificationGasLimit),
    preVerificationGas: toHex(op.preVerificationGas),
    maxFeePerGas: toHex(op.maxFeePerGas),
    maxPriorityFeePerGas: toHex(op.maxPriorityFeePerGas),
    paymasterAndData: op.paymasterAndData,
    signature: op.signature,
  };
}

export function quantity(value: unknown, what: string): bigint {
  let parsed: bigint | undefined;
  if (typeof value === "string" && /^(0x[0-9a-fA-F]{1,64}|\d{1,78})$/.test(value)) parsed = BigInt(value);
  else if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) parsed = BigInt(value);
  if (parsed === undefined || parsed > MAX_REASONABLE_GAS) {
    throw new EstimationUnavailableError(`the bundler answered without a valid ${what}`);
  }
  return parsed;
}

export async function request(
  url: string,
  method: string,
  params: unknown[],
  paymasterChecksSender = false,
): Promise<unknown> {
  try {
    // viem's types know only the methods of its own schemas; the bundler's are plain JSON-RPC here.
    return await bundlerClient(url).request({ method, params } as never);
  } catch (error) {
    const rpc = error instanceof BaseError ? error.walk((cause) => cause instanceof RpcRequestError) : null;
    const refused =
      rpc instanceof RpcRequestError &&
      (OPERATION_REFUSED_CODES.has(rpc.code) || (paymasterChecksSender && rpc.code === PAYMASTER_REFUSED_CODE));
    if (refused) {
      throw new OperationRevertedError(`the bundler refused the operation: ${rpc.details}`);
    }
    const message = `the chain's bundler failed (${method}): ${describeTransportError(error, BUNDLER_TIMEOUT_MS)}`;
    throw rpc instanceof RpcRequestError && rpc.code === -32601
      ? new MethodNotFoundError(message)
      : new EstimationUnavailableError(message);
  }
}

export interface BundlerGas {
  callGasLimit: bigint;
  verificationGasLimit: bigint;
  preVerificationGas: bigint;
}

/**
 * eth_estimateUserOperationGas(op, entryPoint): the three limits with the bundler's own margins. Storage overrides go
 * as its third parameter (a state override, which Alto and most bundlers take); none, no third parameter.
 * `paymasterChecksSender`: the paymaster's refusal (-32501) is the operation's (see PAYMASTER_REFUSED_CODE).
 */
export async function estimateWithBundler(
  url: string,
  entryPoint: Address,
  op: UserOperation,
  {
    overrides = [],
    paymasterChecksSender = false,
  }: { overrides?: readonly StorageOverride[]; paymasterChecksSender?: boolean } = {},
): Promise<BundlerGas> {
  const params: unknown[] = [toRpcUserOperation(op), entryPoint];
  if (overrides.length > 0) params.push(toRpcStateOverride(overrides));
  const result = await request(url, "eth_estimateUserOperationGas", params, paymasterChecksSender);
  if (typeof result !== "object" || result === null) {
    throw new EstimationUnavailableError("the bundler answered eth_estimateUserOperationGas without an object");
  }
  const fields = result as Record<string, unknown>;
  return {
    callGasLimit: quantity(fields.callGasLimit, "callGasLimit"),
    // Older bundlers name it verificationGas.
    verificationGasLimit: quantity(fields.verificationGasLimit ?? fields.verificationGas, "verificationGasLimit"),
    preVerificationGas: quantity(fields.preVerificationGas, "preVerificationGas"),
  };
}

/**
 * The bundler's fee suggestion (`pimlico_getUserOperationGasPrice`, its "standard" tier): the prices it will accept.
 * Undefined when the bundler does not offer the method; other failures throw.
 */
export async function bundlerFees(url: string): Promise<Fees | undefined> {
  let result: unknown;
  try {
    result = await request(url, "pimlico_getUserOperationGasPrice", []);
  } catch (error) {
    if (error instanceof MethodNotFoundError) return undefined;
    throw error;
  }
  const standard = (result as { standard?: Record<string, unknown> } | null)?.standard;
  if (typeof standard !== "object" || standard === null) {
    throw new EstimationUnavailableError(
      "the bundler answered pimlico_getUserOperationGasPrice without a standard tier",
    );
  }
  return {
    maxFeePerGas: fee(standard.maxFeePerGas),
    maxPriorityFeePerGas: fee(standard.maxPriorityFeePerGas),
  };
}

function fee(value: unknown): bigint {
  if (typeof value === "string" && /^0x[0-9a-fA-F]{1,32}$/.test(value)) return BigInt(value);
  throw new EstimationUnavailableError("the bundler suggested a fee that is not a hex quantity");
}
