import { randomBytes } from "node:crypto";
import type { FastifyInstance } from "fastify";
import { type Hex, recoverMessageAddress } from "viem";
import { type AppContext, nowMs } from "../context";
import { badRequest, messages, notFound } from "../errors";
import { findFundingMessage, linkFundingWallet, type Paymaster, saveFundingMessage } from "../storage/paymasters";
import { requireDapp } from "./auth";
import { success } from "./envelope";
import { paymasterView } from "./paymasters";
import { isUuid, jsonObject, oneOf, requiredAddress, requiredString } from "./validate";

const HEX = /^0x[0-9a-fA-F]*$/;

/** A message that says what signing it does, and a nonce so that every GET yields a new one. */
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

/** The three-step funding-wallet flow: get a message, sign it elsewhere, send the signature back. */
export function fundingRoutes(app: FastifyInstance, ctx: AppContext, paymasterPaths: string[]): void {
  app.get<{ Params: { paymasterId: string } }>("/funding-message/:paymasterId", async (request) => {
    const { paymaster } = await requireDapp(ctx.db, request, { missingMessage: messages.authTokenAndApiKeyRequired });
    if (request.params.paymasterId !== paymaster.id) throw notFound(messages.paymasterNotFound);
    const message = fundingMessage(paymaster, nowMs(ctx));
    await saveFundingMessage(ctx.db, paymaster.id, message);
    return success("Funding message sent", { fundingMessage: message });
  });

  for (const path of paymasterPaths) {
    app.patch(`/${path}`, async (request) => {
      const { paymaster } = await requireDapp(ctx.db, request, {
        missingMessage: messages.authTokenAndApiKeyRequired,
        rejected: notFound(messages.userNotFound),
      });
      const body = jsonObject(request.body);
      const paymasterId = requiredString(body, "paymasterId");
      oneOf(requiredString(body, "type"), ["paymasterFundingId"], "type");
      const signature = requiredString(body, "signature", 1000);
      const address = requiredAddress(body, "address");
      if (!HEX.test(signature)) throw badRequest("signature must be a 0x-prefixed hex string");
      if (!isUuid(paymasterId) || paymasterId !== paymaster.id) throw notFound(messages.paymasterNotFound);

      const message = await findFundingMessage(ctx.db, paymaster.id);
      if (message === null || (await signerOf(message, signature as Hex)) !== address) {
        throw badRequest(messages.invalidSignature);
      }
      const linked = await linkFundingWallet(ctx.db, paymaster.id, address, message);
      // A newer message was generated between our read and our write: the signed one is no longer the latest.
      if (!linked) throw badRequest(messages.invalidSignature);
      return success("Paymaster updated successfully", paymasterView(linked));
    });
  }
}
