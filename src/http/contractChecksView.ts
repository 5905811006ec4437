import type { ContractWatch } from "../chain/contractWatch";

/** A failed check of one of our contracts, as /readyz and the chains endpoint show it. */
export interface FailedCheckView {
  entryPointVersion: string;
  kind: string;
  address: string;
  check: string;
  detail: string;
  fix?: string;
}

export interface ContractChecksView {
  /** ok, failing, unknown (no answer from the node yet), or not checked (no rpcUrl, none of our contracts, checks off). */
  status: "ok" | "failing" | "unknown" | "not checked";
  /** When the last pass ended, ISO 8601. */
  checkedAt?: string;
  failed: FailedCheckView[];
}

/** The chain's contract checks in the words of the HTTP answers: its status and each failed check with its fix. */
export function contractChecksView(watch: ContractWatch | undefined, chainId: number): ContractChecksView {
  const checks = watch?.checks(chainId);
  if (!checks) return { status: "not checked", failed: [] };
  const failed = checks.contracts.flatMap((contract) =>
    contract.failed
      ? [
          {
            entryPointVersion: contract.version,
            kind: contract.kind,
            address: contract.address,
            check: contract.failed.check,
            detail: contract.failed.detail,
            ...(contract.failed.fix ? { fix: contract.failed.fix } : {}),
          },
        ]
      : [],
  );
  return {
    status: checks.status,
    ...(checks.checkedAt === undefined ? {} : { checkedAt: new Date(checks.checkedAt).toISOString() }),
    failed,
  };
}
