// Candide's parallel signing puts `signingPhase` ("commit", then "finalize") in the context of pm_getPaymasterData.
// It exists only at EntryPoint v0.9, whose paymaster signature travels outside paymasterData; anywhere else an
// answer that ignored it would be silently wrong (the wallet would wait for a finalize that means nothing), so it is
// refused with the reason. The schema has checked its value already (src/schemas/rpc/mode.ts).
// At EntryPoint v0.9 it is read here (readSigningPhase) with, at "finalize", the paymaster fields the operation
// carries as committed (readCommittedFields); src/actions/parallelSigning.ts serves both phases.
import type { PaymasterFieldsV07 } from "../actions/stepRequest";
import { ENTRY_POINT_VERSIONS, type KnownEntryPointVersion } from "../bindings/entryPoints/versions";
import { invalidParams } from "../errors";
import { CommittedPaymasterFields, SigningPhaseContext } from "../schemas/rpc/signingPhase";
import { MAX_GAS } from "../sponsorship/partialUserOperation";
import { inRange } from "./params";
import { schemaCheck } from "./schemaCheck";

const phaseOf = (context: unknown): unknown =>
  typeof context === "object" && context !== null ? (context as { signingPhase?: unknown }).signingPhase : undefined;

/** ERC-7677's context: a signingPhase for an operation of a version without parallel signing is refused. */
export function refuseSigningPhaseOutsideV09(context: unknown, where: string, version: KnownEntryPointVersion): void {
  const phase = phaseOf(context);
  // The versions whose operations can be signed in parallel (paymaster signature after the user's) say so.
  if (phase === undefined || phase === null || ENTRY_POINT_VERSIONS[version].signsInParallel) return;
  throw invalidParams(
    `${where}.signingPhase: parallel signing needs EntryPoint v0.9, and this operation is for v${version}; ` +
      "leave signingPhase out to sign in sequence",
  );
}

/** pm_sponsorUserOperation's context: parallel signing is pm_getPaymasterData's, never this method's. */
export function refuseSigningPhase(context: unknown, where: string): void {
  const phase = phaseOf(context);
  if (phase === undefined || phase === null) return;
  throw invalidParams(
    `${where}.signingPhase: parallel signing is served by pm_getPaymasterData (ERC-7677) on EntryPoint v0.9, ` +
      "not by this method",
  );
}

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
