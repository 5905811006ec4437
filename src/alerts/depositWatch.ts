import type { Address } from "viem";
import { readDappDeposits } from "../chain/dappDeposits";
import { EXPIRY_MARGIN_SECONDS } from "../chain/paymasterDeposit";
import type { SponsoringChain } from "../chain/sponsoringChains";
import type { DepositFigure } from "../storage/alerts";
import { watchedDeposits } from "../storage/alerts";
import type { Queryable } from "../storage/database";
import type { OutstandingCharges } from "../storage/outstandingCharges";

/**
 * The periodic half of deposit.low: a deposit also moves without any sponsorship (depositFor, withdrawTo, settlement
 * giving back what mined operations held, sponsorships expiring), so every paymaster with alerts set is read again:
 * its funding wallet's balance in each EntryPoint version's verifying paymaster, fresh from the chain, and what its
 * unexpired sponsorships hold there. Each figure goes to `note`, which decides on the crossing.
 */
export async function readWatchedDeposits(
  deps: { db: Queryable; chains: ReadonlyMap<number, SponsoringChain>; outstanding: OutstandingCharges },
  nowMs: number,
  note: (figure: Omit<DepositFigure, "at">) => Promise<void>,
): Promise<void> {
  for (const watched of await watchedDeposits(deps.db)) {
    const chain = deps.chains.get(watched.chainId);
    // Without an RPC no deposit is read (the deposit rule does not check it either).
    if (!chain?.rpcUrl) continue;
    const deposits = await readDappDeposits(chain, watched.fundingAddress as Address);
    for (const deposit of deposits) {
      // Unknown (RPC failure, no verifying paymaster): no figure, so no crossing either way.
      if (deposit.balance === null || deposit.verifyingPaymaster === null) continue;
      const paymasterAddress = deposit.verifyingPaymaster.toLowerCase();
      const outstandingWei = await deps.outstanding.of({
        chainId: chain.chainId,
        paymasterAddress,
        fundingAddress: watched.fundingAddress.toLowerCase(),
        notBefore: Math.floor(nowMs / 1000) - EXPIRY_MARGIN_SECONDS,
      });
      await note({
        paymasterId: watched.paymasterId,
        chainId: chain.chainId,
        paymasterAddress,
        entryPointVersion: deposit.version,
        depositWei: BigInt(deposit.balance),
        outstandingWei,
        nowMs,
      });
    }
  }
}
