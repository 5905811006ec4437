import type { Hex } from "viem";
import { stubPaymasterAndData } from "../chain/gasEstimationStub";
import type { ActionContext } from "./context";
import { stubTerms } from "./sponsorUserOperation";

/**
 * ERC-7677's first step: what the client puts in the operation while its bundler estimates gas. It is our 276-byte
 * paymasterAndData with a signature that recovers to nobody, byte for byte the length of the final one, so the
 * estimate pays for the same calldata. Nothing is decided or signed yet. Undefined when the chain has no verifying
 * paymaster, which no sponsorship can be had without.
 */
export function getPaymasterStubData(ctx: ActionContext, expirySeconds: number): Hex | undefined {
  const paymaster = ctx.chain.verifyingPaymaster;
  if (!paymaster) return undefined;
  return stubPaymasterAndData({ paymaster, ...stubTerms(ctx, expirySeconds) });
}
