// EntryPoint v0.6's operation as the steps work on it: initCode and one paymasterAndData, our paymasters the chain's
// own. Its gas is signed as the client sent it unless the client asks for an estimate (`calculateGasLimits`), and a
// kind's postOp runs on the operation's verificationGasLimit (PaymasterKind.postOpGasFromVerification).
import type { Hex } from "viem";
import { paymasterAndDataV06, type SignableUserOperation } from "../../bindings/entryPoints/v06";
import { ENTRY_POINT_VERSIONS } from "../../bindings/entryPoints/versions";
import { invalidParams } from "../../errors";
import { DUMMY_SIGNATURE } from "../../gasEstimation/gasEstimationStub";
import { FEE_FIELDS, GAS_LIMIT_FIELDS, type PartialUserOperation } from "../../sponsorship/partialUserOperation";
import { allowanceOverride, approvesSpender, QUOTED_APPROVE_GAS } from "../../tokens/allowanceOverride";
import type { ActionContext } from "../context";
import { observedGasEstimate } from "../observedGasEstimation";
import { asGiven } from "../operationGas";
import type { AnyPaymasterKind, GasWanted, StepOperation, Target } from "../stepRequest";
import { filledOperation } from "./filledOperation";
import { stubOutcome } from "./stubOutcome";
import { stubWindow } from "./stubWindow";

const version = ENTRY_POINT_VERSIONS["0.6"];

export function unpackedOperation(target: Target, userOp: PartialUserOperation, signature?: Hex): StepOperation {
  return {
    target,
    sender: userOp.sender,
    version,
    async fill(ctx, kind, wanted) {
      const filled =
        wanted.estimate && wanted.choice.calculateGasLimits
          ? await estimated(ctx, kind, wanted)
          : { userOp: asSent(kind, wanted), feesChosen: false };
      return filledOperation(version, target, kind, filled);
    },
    stub: (ctx, kind, choice) =>
      stubOutcome(ctx, { version, target, kind, choice, userOp }, () => ({
        paymasterAndData: stubOf(ctx, kind, choice.expirySeconds),
      })),
  };

  /** Our paymasterAndData of the final length: the terms the kind would sign now, a signature to nobody. */
  function stubOf(ctx: ActionContext, kind: AnyPaymasterKind, expirySeconds: number): Hex {
    const terms = kind.terms(ctx.setup, stubWindow(ctx, expirySeconds));
    return paymasterAndDataV06({
      paymaster: target.paymaster as `0x${string}`,
      paymasterData: kind.encodeData(terms, DUMMY_SIGNATURE),
    });
  }

  /**
   * The gas as sent: every value must be there. ERC-7677's second step (no estimate) also refuses a
   * verificationGasLimit below what the kind's postOp needs: a bundler estimating over our stub does not know it.
   */
  function asSent(kind: AnyPaymasterKind, wanted: GasWanted): SignableUserOperation {
    if (wanted.purpose === "quote") {
      const missing = [...GAS_LIMIT_FIELDS, ...FEE_FIELDS].filter((field) => userOp[field] === undefined);
      if (missing.length > 0) {
        throw invalidParams(
          `params[0] is missing ${missing.join(", ")}: the quote prices the gas values, so send them or set ` +
            "calculateGasLimits to true",
        );
      }
      return userOp as SignableUserOperation;
    }
    const least = kind.postOpGasFromVerification;
    const limit = userOp.verificationGasLimit;
    if (!wanted.estimate && limit !== undefined && limit < least) {
      throw invalidParams(
        `params[0].verificationGasLimit ${limit} is below ${least}: EntryPoint v0.6 gives the ${kind.contractName}'s ` +
          "postOp this limit, and its charge needs at least that",
      );
    }
    return asGiven(userOp);
  }

  /**
   * `calculateGasLimits` true: the three limits estimated with our stub in (src/gasEstimation/gasEstimation.ts), a limit
   * the client sent kept when higher, verificationGasLimit at least what the kind's postOp needs; missing fees chosen
   * by the chain. A quote's operation that does not approve the kind's fee token yet is estimated as if it did, and
   * priced with the approve's gas (src/tokens/allowanceOverride.ts); never when signing: a signed operation must pay by
   * itself. A chain that cannot estimate signs what was sent, or names what is missing.
   */
  async function estimated(ctx: ActionContext, kind: AnyPaymasterKind, wanted: GasWanted) {
    const { chain } = ctx;
    const paymaster = target.paymaster;
    if (!paymaster || (!chain.rpcUrl && !chain.bundlerUrl)) {
      const missing = [
        ...GAS_LIMIT_FIELDS.filter((field) => !userOp[field]),
        ...FEE_FIELDS.filter((field) => userOp[field] === undefined),
      ];
      if (missing.length === 0) return { userOp: asSent(kind, wanted), feesChosen: false };
      const why = paymaster ? "it has no RPC or bundler configured" : `it has no ${kind.contractName}`;
      throw invalidParams(
        `Chain ${chain.chainId} (${chain.name}) cannot estimate gas: ${why}; send the gas limits and fees ` +
          `(missing: ${missing.join(", ")})`,
      );
    }
    const feeToken = kind.feeToken;
    const approveToCome = wanted.purpose === "quote" && feeToken && !approvesSpender(userOp.callData, paymaster);
    const allowance = approveToCome ? await allowanceOverride(chain, feeToken, userOp.sender, paymaster) : undefined;
    if (approveToCome && !allowance) {
      ctx.log.warn(
        { chainId: chain.chainId, token: feeToken },
        "fee token allowance slot not found: quote estimated on the real allowance",
      );
    }
    const least = kind.postOpGasFromVerification;
    const given = userOp.verificationGasLimit;
    const started = performance.now();
    const { source, l1DataGas, ...estimate } = await observedGasEstimate(ctx, {
      chain,
      userOp:
        least > 0n && (given === undefined || given < least) ? { ...userOp, verificationGasLimit: least } : userOp,
      signature: signature ?? "0x",
      paymasterStub: {
        paymaster,
        paymasterAndData: stubOf(ctx, kind, wanted.choice.expirySeconds),
        checksSender: kind.validationReadsSender,
      },
      overrides: allowance ? [allowance] : [],
    });
    ctx.log.debug(
      { chainId: chain.chainId, source, mode: kind.mode, ms: Math.round(performance.now() - started) },
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
}
