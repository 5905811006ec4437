// Reads `signingPhase` from the context of pm_getPaymasterData (src/schemas/rpc/signingPhase.ts) and, at "finalize",
// the paymaster fields the operation carries as committed.
import type { PaymasterFieldsV07 } from "../actions/stepRequest";
import { CommittedPaymasterFields, SigningPhaseContext } from "../schemas/rpc/signingPhase";
import { MAX_GAS } from "../sponsorship/partialUserOperation";
import { inRange } from "./params";
import { schemaCheck } from "./schemaCheck";

const contextCheck = schemaCheck<typeof SigningPhaseContext, SigningPhaseContext>(SigningPhaseContext);
const fieldsCheck = schemaCheck<typeof CommittedPaymasterFields, CommittedPaymasterFields>(CommittedPaymasterFields);

/** params[3].signingPhase; undefined without a context object or without the member (sequential signing). */
export function readSigningPhase(context: unknown): "commit" | "finalize" | undefined {
  if (context === null || typeof context !== "object" || Array.isArray(context)) return undefined;
  return contextCheck.read(context, "params[3]").signingPhase ?? undefined;
}

/** params[0]'s paymaster fields at "finalize". */
export function readCommittedFields(userOp: unknown): PaymasterFieldsV07 {
  const fields = fieldsCheck.read(userOp, "params[0]");
  return {
    paymaster: fields.paymaster.toLowerCase() as PaymasterFieldsV07["paymaster"],
    paymasterData: fields.paymasterData.toLowerCase() as PaymasterFieldsV07["paymasterData"],
    paymasterVerificationGasLimit: inRange(
      BigInt(fields.paymasterVerificationGasLimit),
      "params[0].paymasterVerificationGasLimit",
      MAX_GAS,
    ),
    paymasterPostOpGasLimit: inRange(
      BigInt(fields.paymasterPostOpGasLimit),
      "params[0].paymasterPostOpGasLimit",
      MAX_GAS,
    ),
  };
}
