// `contracts status`: the network checks (src/chain/paymasterChecks.ts) for our paymasters on one chain, one line per
// check with what to do when it fails. Which paymasters: with --owner, that owner's deterministic addresses; without,
// the ones the chains file names for the node's chain.
import type { Address } from "viem";
import {
  type CheckContext,
  checkChain,
  checkSite,
  type EntryPointSite,
  type NetworkCheck,
  sitesOfChain,
} from "../../chain/paymasterChecks";
import { CommandError, entryPointVersions, kinds, optionalAddress, type RawOptions } from "./options";
import type { Node, Reporter, ServiceSide } from "./session";
import { targets } from "./targets";

export async function status(
  node: Node,
  service: ServiceSide,
  raw: RawOptions,
  report: Reporter,
): Promise<{ ok: boolean; chainId: number; checks: NetworkCheck[] }> {
  const owner = optionalAddress(raw, "owner");
  const configured = service.config.chains.get(node.chainId);
  const context: CheckContext = { signer: service.signer, ...(owner ? { owner } : {}), tokens: configured?.tokens };
  let checks: NetworkCheck[];
  if (owner !== undefined) {
    const sites = ownerSites(owner, raw);
    checks = (await Promise.all(sites.map((site) => checkSite(node.publicClient, site, context)))).flat();
  } else if (configured !== undefined) {
    // Only the chain id would be checked: "every check holds" would then say nothing about any contract.
    if (sitesOfChain(configured).length === 0) {
      throw new CommandError(
        `nothing to check on chain ${node.chainId}: the chains file names no paymaster addresses for chain ` +
          `${node.chainId} (no verifyingPaymaster, tokenPaymaster or permitTokenPaymaster, for any EntryPoint version); ` +
          "add the entry `deploy` printed to the chains file (CHAINS_FILE), or give --owner to check that owner's paymasters",
      );
    }
    checks = await checkChain(node.publicClient, configured, context);
  } else {
    throw new CommandError(
      `chain ${node.chainId} is not in the chains file: give --owner to check that owner's paymasters, or add the entry \`deploy\` printed to the chains file (CHAINS_FILE)`,
    );
  }
  for (const check of checks) report.say(line(check));
  const ok = checks.every((check) => check.ok);
  report.say(ok ? "every check holds" : `${checks.filter((check) => !check.ok).length} check(s) failed`);
  return { ok, chainId: node.chainId, checks };
}

function ownerSites(owner: Address, raw: RawOptions): EntryPointSite[] {
  const chosen = targets(owner, entryPointVersions(raw), kinds(raw, ["verifying"]));
  const versions = [...new Set(chosen.map((target) => target.version))];
  return versions.map((version) => {
    const ofVersion = chosen.filter((target) => target.version === version);
    return {
      version,
      entryPoint: ofVersion[0]?.entryPoint as Address,
      paymasters: Object.fromEntries(ofVersion.map((target) => [target.kind, target.address])),
    };
  });
}

function line(check: NetworkCheck): string {
  const subject = [check.version && `v${check.version}`, check.kind, check.address].filter(Boolean).join(" ");
  const head = `${check.ok ? "ok  " : "FAIL"} ${check.check}${subject ? ` (${subject})` : ""}: ${check.detail}`;
  return check.ok ? head : `${head}\n       what to do: ${check.fix}`;
}
