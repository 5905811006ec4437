import type { Hex } from "viem";
import type { SignableUserOperation } from "../bindings/entryPoints/v06";
import type { TokenFeeTerms } from "../bindings/paymasters/tokenPaymasterAndData";
import { invalidParams } from "../errors";
import { stubTokenPaymasterAndData } from "../gasEstimation/gasEstimationStub";
import { FEE_FIELDS, GAS_LIMIT_FIELDS, type PartialUserOperation } from "../sponsorship/partialUserOperation";
import { allowanceOverride, approvesSpender, QUOTED_APPROVE_GAS } from "../tokens/allowanceOverride";
import type { TokenChain } from "../tokens/erc20Terms";
import type { ActionContext } from "./context";
import { observedGasEstimate } from "./observedGasEstimation";
import { refuseZeroGas } from "./operationGas";

/**
 * The least verificationGasLimit an ERC20-mode operation is signed with: EntryPoint v0.6 gives postOp that much gas,
 * and the token paymaster's postOp (a transferFrom, its event, and the retry after a reverted call) measured up to
 * 38,247 gas on anvil (contracts/TokenPaymaster.sol, POST_OP_OVERHEAD_GAS), plus the 10,000 it keeps back from the
 * token call. An estimate below this (a deployed account with a cheap validation) is raised to it.
 */
export const TOKEN_POSTOP_MIN_VERIFICATION_GAS = 60_000n;

/**
 * The gas values to sign or to quote: as sent when calculateGasLimits is false (all must be there), else estimated
 * as in SPONSORED mode, with the token paymaster's 278-byte stub carrying the terms that will be signed. A quote's
 * operation that does not approve the token paymaster yet is estimated with the allowance already given, and quoted
 * with the approve's gas (allowanceOverride.ts).
 */
export async function withTokenGas(
  userOp: PartialUserOperation,
  accountSignature: Hex,
  calculateGasLimits: boolean,
  ctx: ActionContext,
  chain: TokenChain,
  terms: TokenFeeTerms,
  purpose: "sign" | "quote",
): Promise<{ userOp: SignableUserOperation; feesChosen: boolean; l1DataGas?: bigint }> {
  const missing = [...GAS_LIMIT_FIELDS, ...FEE_FIELDS].filter((field) => userOp[field] === undefined);
  const covers = purpose === "sign" ? "the signature covers" : "the quote prices";
  if (!calculateGasLimits || (!chain.rpcUrl && !chain.bundlerUrl)) {
    if (missing.length === 0) {
      if (purpose === "sign") refuseZeroGas(userOp);
      return { userOp: userOp as SignableUserOperation, feesChosen: false };
    }
    const remedy = calculateGasLimits
      ? `chain ${chain.chainId} (${chain.name}) cannot estimate gas: it has no RPC or bundler configured`
      : "set calculateGasLimits to true to have them estimated";
    throw invalidParams(
      `params[0] is missing ${missing.join(", ")}: ${covers} the gas values, so send them or ${remedy}`,
    );
  }
  const started = performance.now();
  // A quote is asked before the wallet adds its approve: estimated as if the allowance were given, plus the approve's
  // gas. Never when signing: the operation signed must pay by itself.
  const approveToCome = purpose === "quote" && !approvesSpender(userOp.callData, chain.tokenPaymaster);
  const allowance = approveToCome
    ? await allowanceOverride(chain, terms.feeToken, userOp.sender, chain.tokenPaymaster)
    : undefined;
  if (approveToCome && !allowance) {
    ctx.log.warn(
      { chainId: chain.chainId, token: terms.feeToken },
      "fee token allowance slot not found: quote estimated on the real allowance",
    );
  }
  const { source, l1DataGas, ...estimate } = await observedGasEstimate(ctx, {
    chain,
    userOp: {
      ...userOp,
      verificationGasLimit: maxOf(userOp.verificationGasLimit, TOKEN_POSTOP_MIN_VERIFICATION_GAS),
    },
    signature: accountSignature,
    paymasterStub: {
      paymaster: chain.tokenPaymaster,
      paymasterAndData: stubTokenPaymasterAndData({ ...terms, paymaster: chain.tokenPaymaster }),
      checksSender: true,
    },
    overrides: allowance ? [allowance] : [],
  });
  ctx.log.debug(
    { chainId: chain.chainId, source, mode: "ERC20", ms: Math.round(performance.now() - started) },
    "gas estimated",
  );
  return {
    userOp: {
      ...userOp,
      ...estimate,
      ...(allowance ? { callGasLimit: estimate.callGasLimit + QUOTED_APPROVE_GAS } : {}),
    },
    feesChosen: userOp.maxFeePerGas === undefined || userOp.maxPriorityFeePerGas === undefined,
    l1DataGas,
  };
}

function maxOf(a: bigint | undefined, b: bigint): bigint {
  return a !== undefined && a > b ? a : b;
}
