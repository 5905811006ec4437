// Whether an operation deploys its account, decided from the sender's code on chain and not from the operation's
// fields alone. An operation may name a factory (v0.6 initCode, v0.7 and later a factory) for an account that exists:
// EntryPoint v0.6 to v0.8 then fail it (AA10), and v0.9 ignores the factory and runs the call, so a rule reading the
// factory alone would sponsor an ordinary call as a "deployment". Read once per request, and only for an operation that
// names a deployment: every other operation costs no call to the node.

import type { OperationView } from "../bindings/entryPoints/operationReading";
import { type AccountCodeSource, EIP7702_DELEGATION_PREFIX } from "../chain/accountCode";
import type { RuleInput } from "./rule";

export type DeploymentReading =
  /** The operation names nothing that deploys, or an EIP-7702 authorization the sender already carries. */
  | { state: "none"; note?: string }
  /** It deploys the account; `note` says when the sender's code could not be looked at (no RPC). */
  | { state: "deploys"; what: string; note?: string }
  /** It names `what`, but the sender has code already: nothing would be deployed. */
  | { state: "deployed"; what: string }
  /** It names `what`, and the node could not say whether the sender has code. */
  | { state: "unknown"; what: string; error: string };

export const NO_RPC_NOTE = "no RPC configured: the sender's code was not read, the operation's fields decided";

/** One request's answer, read when a rule first asks and shared by every rule after it. */
export class SenderDeployment {
  #reading: Promise<DeploymentReading> | undefined;

  constructor(
    /** The operation as its version reads it (OperationReading.view). */
    private readonly operation: OperationView,
    /** The chain's code reader; undefined when the chain has no RPC. */
    private readonly code: AccountCodeSource | undefined,
    /** The decision's clock (ms), at which the code is read. */
    private readonly nowMs: number,
  ) {}

  read(): Promise<DeploymentReading> {
    this.#reading ??= this.#readOnce();
    return this.#reading;
  }

  async #readOnce(): Promise<DeploymentReading> {
    const named = this.operation.deployment;
    if (named === undefined) return { state: "none" };
    // The marker with data runs the account's initialisation whatever its code (it must be delegated already).
    if (named.kind === "eip7702Initialisation") return { state: "deploys", what: named.what };
    if (!this.code) return { state: "deploys", what: named.what, note: NO_RPC_NOTE };
    const reading = await this.code.read(this.operation.sender, this.nowMs);
    if (!reading.ok) return { state: "unknown", what: named.what, error: reading.error };
    if (named.kind === "eip7702Authorization") {
      // An authorization to the delegate the account already has changes nothing: no deployment.
      const current = `${EIP7702_DELEGATION_PREFIX}${named.delegate.slice(2)}`.toLowerCase();
      return reading.code === current
        ? { state: "none", note: `the sender is already delegated to ${named.delegate.toLowerCase()}` }
        : { state: "deploys", what: named.what };
    }
    return reading.code === "0x" ? { state: "deploys", what: named.what } : { state: "deployed", what: named.what };
  }
}

/** The request's reading, or for rules evaluated without a chain (unit tests), one from the operation's fields. */
export function senderDeploymentOf(
  input: Pick<RuleInput, "userOp" | "version" | "senderDeployment" | "nowMs">,
): SenderDeployment {
  return input.senderDeployment ?? new SenderDeployment(input.version.view(input.userOp), undefined, input.nowMs);
}
