import type { Address } from "viem";
import { readDappDeposits } from "../chain/dappDeposits";
import { depositKey, EXPIRY_MARGIN_SECONDS } from "../chain/paymasterDeposit";
import type { SponsoringChain } from "../chain/sponsoringChains";
import type { DepositReading, InFlightCharges, ReadEnd } from "../sponsorship/rules/deposit";
import { watchedDeposits } from "../storage/alerts";
import type { Queryable } from "../storage/database";
import type { OutstandingCharges } from "../storage/outstandingCharges";

/**
 * The periodic half of deposit.low: a deposit also moves without any sponsorship (depositFor, withdrawTo, settlement
 * giving back what mined operations held, sponsorships expiring), so every paymaster with alerts set is read again:
 * its funding wallet's balance in each EntryPoint version's verifying paymaster, fresh from the chain, and what its
 * unexpired sponsorships hold there, those of this process being signed included. Each reading goes to `note`, which
 * decides on the crossing.
 *
 * The in-flight charges count as they do in the deposit check: a sponsorship that passed its check but is not recorded
 * yet is missing from the outstanding query, and a reading without it would find the deposit higher than the
 * sponsorship's own reading did, re-arming the alert for a rise that never happened (docs/alerts.md).
 */
export async function readWatchedDeposits(
  deps: {
    db: Queryable;
    chains: ReadonlyMap<number, SponsoringChain>;
    outstanding: OutstandingCharges;
    inFlight: InFlightCharges;
  },
  nowMs: number,
  note: (reading: DepositReading) => void,
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
      const fundingAddress = watched.fundingAddress.toLowerCase();
      const snapshot = deps.inFlight.beginRead();
      let recorded: bigint;
      let inFlightNow: ReadEnd;
      try {
        recorded = await deps.outstanding.of({
          chainId: chain.chainId,
          paymasterAddress,
          fundingAddress,
          notBefore: Math.floor(nowMs / 1000) - EXPIRY_MARGIN_SECONDS,
        });
      } finally {
        inFlightNow = deps.inFlight.endRead(snapshot, depositKey(chain.chainId, paymasterAddress, fundingAddress));
      }
      note({
        paymasterId: watched.paymasterId,
        chainId: chain.chainId,
        paymasterAddress,
        entryPointVersion: deposit.version,
        depositWei: BigInt(deposit.balance),
        outstandingWei: recorded + inFlightNow.held,
        nowMs,
        order: inFlightNow.order,
        exact: inFlightNow.exact,
      });
    }
  }
}
