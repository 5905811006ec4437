// The operation of EntryPoint v0.7 and later as the steps work on it: the factory apart from its data, the paymaster's
// two gas limits beside the account's (the kind sets them: PaymasterKind.gasLimits), our paymaster the one of the
// EntryPoint the request named. Its gas is estimated wherever the chain can (operationGasV07.ts); a version of this
// shape needs nothing here, only its EntryPointVersion in src/bindings/entryPoints/.
import type { Hex } from "viem";
import { ENTRY_POINT_VERSIONS } from "../../bindings/entryPoints/versions";
import { DUMMY_SIGNATURE } from "../../gasEstimation/gasEstimationStub";
import type { PartialUserOperationV07 } from "../../sponsorship/partialUserOperationV07";
import type { ActionContext } from "../context";
import { asGivenV07, estimatedV07, hasGasV07, type WithGasV07 } from "../operationGasV07";
import type { AnyPaymasterKind, EntryPointV07, PaymasterFieldsV07, StepOperation } from "../stepRequest";
import { filledOperation } from "./filledOperation";
import { stubOutcome } from "./stubOutcome";
import { stubWindow } from "./stubWindow";

export function packedOperation(
  target: EntryPointV07,
  userOp: PartialUserOperationV07,
  signature?: Hex,
): StepOperation {
  const version = ENTRY_POINT_VERSIONS[target.version];
  return {
    target,
    sender: userOp.sender,
    version,
    async fill(ctx, kind, wanted) {
      const request = { target, userOp, ...(signature ? { signature } : {}) };
      const stub = () => stubFields(ctx, kind, wanted.choice.expirySeconds);
      // Signing estimates wherever the chain can or a limit is missing; a quote only where gas is missing.
      let withGas: WithGasV07 = { userOp };
      if (wanted.purpose === "quote") {
        if (!hasGasV07(userOp)) withGas = await estimatedV07(ctx, request, stub());
      } else if (wanted.estimate) {
        withGas = await estimatedV07(ctx, { ...request, calculateGasLimits: wanted.choice.calculateGasLimits }, stub());
      }
      return filledOperation(version, target, kind, {
        userOp: asGivenV07(withGas.userOp, kind.gasLimits),
        feesChosen: false,
        l1DataGas: withGas.l1DataGas,
      });
    },
    stub(ctx, kind, choice) {
      const fields = stubFields(ctx, kind, choice.expirySeconds);
      const { paymasterVerificationGasLimit, paymasterPostOpGasLimit } = fields;
      const withLimits = { ...userOp, paymasterVerificationGasLimit, paymasterPostOpGasLimit };
      return stubOutcome(ctx, { version, target, kind, choice, userOp: withLimits }, () => fields);
    },
  };

  /**
   * Our fields of the final length: the kind's gas limits as they will be signed, and paymasterData with the terms
   * it would sign now and a signature that recovers to nobody, so an estimate pays for the same bytes.
   */
  function stubFields(ctx: ActionContext, kind: AnyPaymasterKind, expirySeconds: number): PaymasterFieldsV07 {
    return {
      paymaster: kind.paymaster ?? target.paymaster,
      paymasterData: kind.encodeData(kind.terms(ctx.setup, stubWindow(ctx, expirySeconds)), DUMMY_SIGNATURE),
      ...kind.gasLimits(userOp),
    };
  }
}
