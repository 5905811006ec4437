// A dApp's deposit in our verifying paymaster of each EntryPoint version a chain serves, for the management API's view:
// read fresh (no cache, unlike the deposit check's DepositBalances), every version at once, each read bounded by the
// chain client's timeout. VerifyingPaymasterV07 keeps the v0.6 contract's getBalance(paymasterId).
import type { Address } from "viem";
import { verifyingPaymasterAbi } from "../../contracts/artifacts/VerifyingPaymaster.abi";
import type { KnownEntryPointVersion } from "../bindings/entryPoints/versions";
import { chainClient } from "./chainClient";
import { describeChainError } from "./paymasterDeposit";
import type { SponsoringChain } from "./sponsoringChains";

/** The balance of one version's verifying paymaster, or why it is not known. */
export interface VersionDeposit {
  version: KnownEntryPointVersion;
  entryPoint: Address;
  /** Null where the chain has no verifying paymaster for this version. */
  verifyingPaymaster: Address | null;
  /** Wei, as a decimal string; null when it could not be read (see `error`). */
  balance: string | null;
  error?: string;
}

/** Every version the chain serves, v0.6 first; `wallet` null (no funding wallet linked) reads nothing. */
export async function readDappDeposits(chain: SponsoringChain, wallet: Address | null): Promise<VersionDeposit[]> {
  const versions: { version: KnownEntryPointVersion; entryPoint: Address; paymaster?: Address }[] = [
    { version: "0.6", entryPoint: chain.entryPoint, paymaster: chain.verifyingPaymaster },
    ...[...chain.entryPoints].map(([version, served]) => ({
      version,
      entryPoint: served.entryPoint,
      paymaster: served.verifyingPaymaster,
    })),
  ];
  const client = chainClient(chain);
  return Promise.all(
    versions.map(async ({ version, entryPoint, paymaster }): Promise<VersionDeposit> => {
      const known = { version, entryPoint, verifyingPaymaster: paymaster ?? null };
      if (!paymaster) return { ...known, balance: null, error: "no verifying paymaster for this version on the chain" };
      if (!wallet) return { ...known, balance: null, error: "no funding wallet is linked to the paymaster" };
      if (!client) return { ...known, balance: null, error: "the chain has no rpcUrl configured" };
      try {
        const balance = await client.readContract({
          address: paymaster,
          abi: verifyingPaymasterAbi,
          functionName: "getBalance",
          args: [wallet],
        });
        return { ...known, balance: balance.toString() };
      } catch (error) {
        return { ...known, balance: null, error: describeChainError(error, { verifyingPaymaster: paymaster }) };
      }
    }),
  );
}
