import type { FastifyInstance } from "fastify";
import { setDepositAlert } from "../actions/alerts";
import { fundingBalance, issueFundingMessage, linkFundingWallet, setPaymasterActive } from "../actions/funding";
import { setAllowedOrigins } from "../actions/origins";
import { rotateApiKey } from "../actions/rotateApiKey";
import { setSponsorInfo } from "../actions/sponsorInfo";
import { setValidityBlocks } from "../actions/validityBlocks";
import { UserNotFoundError } from "../errors";
import { fundingBalanceSchema, fundingMessageSchema, linkFundingWalletSchema } from "../schemas/management/funding";
import { dappGuard } from "./auth";
import { success } from "./envelope";
import { type Management, typed, urlCheckOf } from "./management";
import { paymasterView } from "./paymasters";

/** The three-step funding-wallet flow: get a message, sign it elsewhere, send the signature back. */
export function fundingRoutes(
  app: FastifyInstance,
  { ctx, actions, credentials }: Management,
  paymasterPaths: string[],
): void {
  const api = typed(app);
  const dapp = dappGuard(credentials);
  // The interface answers a token or apiKey it does not accept on the link with 404 "User not found".
  const dappOrUserNotFound = dappGuard(credentials, { rejected: UserNotFoundError });
  const checkUrl = urlCheckOf(app, ctx);

  api.get(
    "/funding-message/:paymasterId",
    { schema: fundingMessageSchema, preValidation: dapp.preValidation },
    async (request) => {
      const message = await issueFundingMessage(actions, dapp.of(request).paymaster, request.params.paymasterId);
      return success("Funding message sent", { fundingMessage: message });
    },
  );

  // Not in the three steps: what the linked wallet has deposited, per EntryPoint version.
  api.get(
    "/funding-balance/:paymasterId",
    { schema: fundingBalanceSchema, preValidation: dapp.preValidation },
    async (request) => {
      const balance = await fundingBalance(actions, dapp.of(request).paymaster, request.params.paymasterId);
      return success("Funding balance fetched", balance);
    },
  );

  for (const path of paymasterPaths) {
    api.patch(
      `/${path}`,
      { schema: linkFundingWalletSchema, preValidation: dappOrUserNotFound.preValidation },
      async (request) => {
        const { paymaster } = dappOrUserNotFound.of(request);
        const body = request.body;
        if (body.type === "rotateApiKey") {
          const rotated = await rotateApiKey(actions, paymaster, body);
          return success("Paymaster updated successfully", {
            ...paymasterView(rotated.paymaster),
            previousApiKeyValidUntil: rotated.previousApiKeyValidUntil,
          });
        }
        const updated =
          body.type === "active"
            ? await setPaymasterActive(actions, paymaster, body)
            : body.type === "depositAlert"
              ? await setDepositAlert(actions, paymaster, body, checkUrl)
              : body.type === "sponsorInfo"
                ? await setSponsorInfo(actions, paymaster, body)
                : body.type === "allowedOrigins"
                  ? await setAllowedOrigins(actions, paymaster, body)
                  : body.type === "validityBlocks"
                    ? await setValidityBlocks(actions, paymaster, body)
                    : await linkFundingWallet(actions, paymaster, body);
        return success("Paymaster updated successfully", paymasterView(updated));
      },
    );
  }
}
