import type { ChainView } from "../api/paymasters";

/**
 * What a paymaster's chain serves: the EntryPoint versions with our contracts, and the service's checks of them. A
 * chain listed but not served yet, or whose contracts fail a check, refuses every sponsorship: the dApp's team sees
 * that here rather than in its users' refusals.
 */
export function ChainServes({ chain }: { chain: ChainView | undefined }) {
  if (!chain) return null;
  const versions = Object.keys(chain.entryPoints).sort();
  if (versions.length === 0) {
    return (
      <span class="state off" title="The chains file names none of our paymasters on this chain">
        not served yet
      </span>
    );
  }
  const failing = chain.checks.status === "failing";
  return (
    <>
      {versions.map((version) => (
        <span key={version} class="tag" title={servedTitle(chain, version)}>
          v{version}
        </span>
      ))}{" "}
      {failing ? (
        <span class="state off" title={chain.checks.failed.map((failed) => failed.detail).join("; ")}>
          checks failing
        </span>
      ) : chain.checks.status === "ok" ? (
        <span class="state on">checks ok</span>
      ) : null}
    </>
  );
}

/** The chain's failed checks, each with its fix, for the paymaster's page; nothing when every check holds. */
export function FailedChecks({ chain }: { chain: ChainView | undefined }) {
  if (!chain || chain.checks.failed.length === 0) return null;
  return (
    <div class="error" role="alert">
      Sponsorships through these contracts are refused until fixed:
      <ul>
        {chain.checks.failed.map((failed) => (
          <li key={`${failed.address}-${failed.check}`}>
            {failed.kind} paymaster, EntryPoint v{failed.entryPointVersion} (<code>{failed.address}</code>):{" "}
            {failed.check} check: {failed.detail}
            {failed.fix ? ` (${failed.fix})` : ""}
          </li>
        ))}
      </ul>
    </div>
  );
}

function servedTitle(chain: ChainView, version: string): string {
  const served = chain.entryPoints[version];
  if (!served) return "";
  const parts = [`EntryPoint ${served.entryPoint}`];
  if (served.verifyingPaymaster) parts.push(`verifying paymaster ${served.verifyingPaymaster}`);
  if (served.tokenPaymaster) parts.push(`token paymaster ${served.tokenPaymaster}`);
  return parts.join(", ");
}
