import type { ContractWatch } from "../chain/contractWatch";

/** A failed check of one of our contracts, as /readyz and the chains endpoint show it. */
export interface FailedCheckView {
  /** The EntryPoint version, paymaster kind and contract the check is about, where it has them. */
  entryPointVersion?: string;
  kind?: string;
  address?: string;
  check: string;
  detail: string;
  fix?: string;
}

export interface ContractChecksView {
  /** ok, failing, unknown (no answer from the node yet), or not checked (no rpcUrl, none of our contracts, checks off). */
  status: "ok" | "failing" | "unknown" | "not checked";
  /** When the last pass that read the chain ended, ISO 8601. */
  checkedAt?: string;
  failed: FailedCheckView[];
  /** Why the latest pass could not read the chain (its node did not answer): the verdict above is older. */
  readError?: string;
}

/** The chain's contract checks in the words of the HTTP answers: its status and each failed check with its fix. */
export function contractChecksView(watch: ContractWatch | undefined, chainId: number): ContractChecksView {
  const checks = watch?.checks(chainId);
  if (!checks) return { status: "not checked", failed: [] };
  const failed = checks.lines
    .filter((line) => !line.ok)
    .map((line) => ({
      ...(line.version ? { entryPointVersion: line.version } : {}),
      ...(line.kind ? { kind: line.kind } : {}),
      ...(line.address ? { address: line.address } : {}),
      check: line.check,
      detail: line.detail,
      ...(line.fix ? { fix: line.fix } : {}),
    }));
  return {
    status: checks.status,
    ...(checks.checkedAt === undefined ? {} : { checkedAt: new Date(checks.checkedAt).toISOString() }),
    failed,
    ...(checks.readError ? { readError: checks.readError } : {}),
  };
}
