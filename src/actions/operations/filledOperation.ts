// An operation whose gas is filled in, bound to its version, EntryPoint, paymaster and kind: what every shape's fill
// answers, so that the steps sign it without knowing which version it is.
import type { EntryPointVersion } from "../../bindings/entryPoints/entryPointVersion";
import type { SponsoredUserOperation } from "../../sponsorship/partialUserOperationV07";
import { signAndAnswer } from "../signOperation";
import type { AnyPaymasterKind, FilledOperation, SignedGas, Target } from "../stepRequest";

export function filledOperation<Op extends SponsoredUserOperation & SignedGas>(
  version: EntryPointVersion<Op>,
  target: Target,
  kind: AnyPaymasterKind,
  filled: { userOp: Op; feesChosen: boolean; l1DataGas?: bigint | undefined },
): FilledOperation {
  const { userOp, l1DataGas } = filled;
  const operation: FilledOperation = {
    userOp,
    feesChosen: filled.feesChosen,
    ...(l1DataGas === undefined ? {} : { l1DataGas }),
    sign: (ctx, options) =>
      signAndAnswer(ctx, {
        version,
        entryPoint: target.entryPoint,
        kind,
        paymaster: kind.paymaster ?? target.paymaster,
        userOp,
        expirySeconds: options.expirySeconds,
        smartAccount: options.smartAccount,
        webhookData: options.webhookData,
        ...(options.parallel ? { parallel: true } : {}),
        ...(l1DataGas === undefined ? {} : { l1DataGas }),
      }),
  };
  if (!version.signsInParallel) return operation;
  return {
    ...operation,
    // The paymaster's limits are the ones the client's fields carry: the hash must be of the operation it will send.
    userOpHashWith: (ctx, fields) =>
      version.userOpHash(
        {
          ...userOp,
          paymasterVerificationGasLimit: fields.paymasterVerificationGasLimit,
          paymasterPostOpGasLimit: fields.paymasterPostOpGasLimit,
        },
        {
          paymaster: fields.paymaster,
          paymasterData: fields.paymasterData,
          paymasterSignature: fields.paymasterSignature,
        },
        target.entryPoint,
        ctx.chain.chainId,
      ),
  };
}
