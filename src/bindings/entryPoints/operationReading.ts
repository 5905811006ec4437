// What the sponsorship rules read of an operation whatever its EntryPoint version: sender, nonce, callData, what would
// deploy the account, its worst-case cost, what it can take from a deposit, its webhook JSON. Each version implements
// it (v06.ts, v07.ts), and a rule is handed the operation's version beside the operation (src/sponsorship/rule.ts), so
// a rule written once decides every version's operations and no rule asks which version it has.
import type { Address, Hex } from "viem";
import type { SponsoredUserOperation } from "../../sponsorship/partialUserOperationV07";
import type { KnownEntryPointVersion } from "./versions";

/** The account's gas limits and the fees of every version's operation, in the order the EntryPoint packs them. */
export const GAS_LIMIT_FIELDS = ["callGasLimit", "verificationGasLimit", "preVerificationGas"] as const;
export const FEE_FIELDS = ["maxFeePerGas", "maxPriorityFeePerGas"] as const;

export interface OperationView {
  sender: Address;
  nonce: bigint;
  callData: Hex;
  /**
   * What in the operation would create or install the account, undefined when it names nothing of the kind. Whether
   * it does deploy depends on the sender's code too: src/sponsorship/senderDeployment.ts decides.
   */
  deployment: NamedDeployment | undefined;
}

/** A deployment an operation names, with `what`: its words for a refusal ("initCode", "a factory", …). */
export type NamedDeployment =
  /** v0.6 initCode or a later version's factory: creates the account where the sender has no code. */
  | { kind: "factory"; what: string }
  /** v0.8 and later: an EIP-7702 authorization installs `delegate` as the sender EOA's code. */
  | { kind: "eip7702Authorization"; what: string; delegate: Address }
  /** v0.8 and later: data after the 0x7702 marker, the EntryPoint's initialisation call into the delegated account. */
  | { kind: "eip7702Initialisation"; what: string };

/** The operation as a WEBHOOK rule receives it: numbers in decimal, absent fields left out. */
export type OperationJson = Record<string, string | Record<string, string>>;

/**
 * The reading of one version's operations. The engine pairs every operation with its own version, so each
 * implementation reads the fields its version has (methods, so that a version typed for its own operation fits).
 */
export interface OperationReading {
  readonly name: KnownEntryPointVersion;
  view(op: SponsoredUserOperation): OperationView;
  /**
   * The most the operation can cost in wei, what a NATIVE_ASSET spending limit reserves: the EntryPoint's prefund
   * with a paymaster. The rules run on operations whose gas is complete; a missing field is a bug of the caller.
   */
  worstCaseCostWei(op: SponsoredUserOperation): bigint;
  /** What the operation can take from the paymaster's deposit at most, wei. */
  depositChargeWei(op: SponsoredUserOperation): bigint;
  /** The operation as a WEBHOOK rule receives it: its version's own fields. */
  webhookJson(op: SponsoredUserOperation): OperationJson;
}

/**
 * The gas fields a worst case reads, each required: an operation the rules decide on has them all (the stub fills
 * what is missing with zero first), so a missing one is thrown as a programming error, never priced as zero.
 */
export function requiredGas<Field extends string>(
  op: Partial<Record<Field, bigint>>,
  fields: readonly Field[],
): Record<Field, bigint> {
  const gas = {} as Record<Field, bigint>;
  for (const field of fields) {
    const value = op[field];
    if (value === undefined) throw new Error(`the operation's worst-case cost needs ${field}, which it lacks`);
    gas[field] = value;
  }
  return gas;
}

/** The fields of `op` named in `fields` that it carries, as decimal strings: a webhook's JSON numbers. */
export function decimalFields(op: object, fields: readonly string[]): Record<string, string> {
  const json: Record<string, string> = {};
  const given = op as Record<string, unknown>;
  for (const field of fields) {
    const value = given[field];
    if (typeof value === "bigint") json[field] = value.toString();
  }
  return json;
}
