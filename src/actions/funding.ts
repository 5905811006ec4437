import { randomBytes } from "node:crypto";
import { type Address, type Hex, recoverMessageAddress } from "viem";
import { readDappDeposits, type VersionDeposit } from "../chain/dappDeposits";
import { EXPIRY_MARGIN_SECONDS } from "../chain/paymasterDeposit";
import { sponsoringChains } from "../chain/sponsoringChains";
import { InvalidSignatureError, PaymasterNotFoundError } from "../errors";
import type { LinkFundingWalletBody, SetPaymasterActiveBody } from "../schemas/management/funding";
import { OutstandingCharges } from "../storage/outstandingCharges";
import {
  findFundingMessage,
  linkFundingWallet as link,
  type Paymaster,
  saveFundingMessage,
  setPaymasterActive as storePaymasterActive,
} from "../storage/paymasters";
import { isUuid, type ManagementContext } from "./managementContext";

/** A message that says what signing it does, and a nonce so that every request yields a new one. */
function fundingMessage(paymaster: Paymaster, issuedAtMs: number): string {
  return [
    "Paymaster Service: link this wallet as the funding wallet of a paymaster.",
    `Paymaster: ${paymaster.name} (${paymaster.id})`,
    `Chain ID: ${paymaster.chainId}`,
    `Issued at: ${new Date(issuedAtMs).toISOString()}`,
    `Nonce: ${randomBytes(16).toString("hex")}`,
  ].join("\n");
}

async function signerOf(message: string, signature: Hex): Promise<string | undefined> {
  try {
    return (await recoverMessageAddress({ message, signature })).toLowerCase();
  } catch {
    return undefined;
  }
}

/** Step 1: a new message to sign; only the latest one links a wallet. */
export async function issueFundingMessage(ctx: ManagementContext, paymaster: Paymaster, paymasterId: string) {
  if (paymasterId !== paymaster.id) throw new PaymasterNotFoundError();
  const message = fundingMessage(paymaster, ctx.now());
  await saveFundingMessage(ctx.db, paymaster.id, message);
  return message;
}

/** Step 3: the wallet that signed the latest message becomes the paymaster's funding wallet. */
export async function linkFundingWallet(
  ctx: ManagementContext,
  paymaster: Paymaster,
  body: LinkFundingWalletBody,
): Promise<Paymaster> {
  if (!isUuid(body.paymasterId) || body.paymasterId !== paymaster.id) throw new PaymasterNotFoundError();
  const address = body.address.toLowerCase();
  const message = await findFundingMessage(ctx.db, paymaster.id);
  if (message === null || (await signerOf(message, body.signature as Hex)) !== address) {
    throw new InvalidSignatureError();
  }
  const linked = await link(ctx.db, paymaster.id, address, message);
  // A newer message was generated between our read and our write: the signed one is no longer the latest.
  if (!linked) throw new InvalidSignatureError();
  ctx.setupChanged(paymaster.apiKey);
  return linked;
}

export interface FundingBalance {
  paymasterId: string;
  chainId: number;
  fundingWalletAddress: string | null;
  /** EntryPoint v0.6's deposit, in the fields a v0.6-only client reads. */
  entryPoint: string;
  verifyingPaymaster: string | null;
  balance: string | null;
  error?: string;
  /** Every version the chain serves, v0.6 first. */
  entryPoints: DepositView[];
}

/**
 * A version's deposit with what its unexpired sponsorships may still cost (`held`) and what is left for new ones
 * (`available`, never below 0): the same sum the deposit rule subtracts before sponsoring, so the dashboard shows what
 * the service will actually sponsor. Both null when the balance is unknown.
 */
type DepositView = VersionDeposit & { held: string | null; available: string | null };

async function withHolds(
  ctx: ManagementContext,
  chainId: number,
  wallet: string | null,
  deposits: VersionDeposit[],
): Promise<DepositView[]> {
  const outstanding = new OutstandingCharges(ctx.db);
  const notBefore = Math.floor(ctx.now() / 1000) - EXPIRY_MARGIN_SECONDS;
  return Promise.all(
    deposits.map(async (deposit) => {
      if (deposit.balance === null || !deposit.verifyingPaymaster || !wallet) {
        return { ...deposit, held: null, available: null };
      }
      const held = await outstanding.of({
        chainId,
        paymasterAddress: deposit.verifyingPaymaster.toLowerCase(),
        fundingAddress: wallet.toLowerCase(),
        notBefore,
      });
      const balance = BigInt(deposit.balance);
      return { ...deposit, held: held.toString(), available: (balance > held ? balance - held : 0n).toString() };
    }),
  );
}

/** The funding wallet's deposit in our verifying paymaster of each EntryPoint version the paymaster's chain serves. */
export async function fundingBalance(
  ctx: ManagementContext,
  paymaster: Paymaster,
  paymasterId: string,
): Promise<FundingBalance> {
  if (paymasterId !== paymaster.id) throw new PaymasterNotFoundError();
  // A paymaster is created for a configured chain; one no longer configured is not found rather than half-answered.
  const chain = sponsoringChains(ctx.chains).get(paymaster.chainId);
  if (!chain) throw new PaymasterNotFoundError();
  const deposits = await readDappDeposits(chain, paymaster.fundingAddress as Address | null);
  const entryPoints = await withHolds(ctx, paymaster.chainId, paymaster.fundingAddress, deposits);
  const [v06] = entryPoints;
  return {
    paymasterId: paymaster.id,
    chainId: paymaster.chainId,
    fundingWalletAddress: paymaster.fundingAddress,
    entryPoint: chain.entryPoint,
    verifyingPaymaster: v06?.verifyingPaymaster ?? null,
    balance: v06?.balance ?? null,
    ...(v06?.error ? { error: v06.error } : {}),
    entryPoints,
  };
}

/** Pauses or resumes the whole paymaster; the RPC endpoint sees it at once (the setup cache is told). */
export async function setPaymasterActive(
  ctx: ManagementContext,
  paymaster: Paymaster,
  body: SetPaymasterActiveBody,
): Promise<Paymaster> {
  if (!isUuid(body.paymasterId) || body.paymasterId !== paymaster.id) throw new PaymasterNotFoundError();
  const updated = await storePaymasterActive(ctx.db, paymaster.id, body.active);
  if (!updated) throw new PaymasterNotFoundError();
  ctx.setupChanged(paymaster.apiKey);
  return updated;
}
