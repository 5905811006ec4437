// The EntryPoint version an operation built by a test belongs to, from its shape: what the service learns from the
// EntryPoint a request names, and rules evaluated alone (without a request) are handed beside the operation.
import { ENTRY_POINT_VERSIONS } from "../../src/bindings/entryPoints/versions";
import type { SponsoredUserOperation } from "../../src/sponsorship/partialUserOperationV07";

export function versionOf(op: SponsoredUserOperation) {
  return "entryPointVersion" in op ? ENTRY_POINT_VERSIONS[op.entryPointVersion] : ENTRY_POINT_VERSIONS["0.6"];
}
