import Type from "typebox";
import { messages } from "../../errors";
import { Success, TooManyRequests, tokenOnly, Unauthorized } from "./common";

/** An extension: the chains a paymaster can be created for, so that a client offers a choice instead of a guess. */

const SupportedChain = Type.Object({
  chainId: Type.Integer({ examples: [31337] }),
  name: Type.String({ examples: ["local"] }),
});

export const listChainsSchema = {
  summary: "The chains this service sponsors on (the chainId a new paymaster may take)",
  tags: ["paymasters"],
  security: tokenOnly,
  response: {
    200: Success("Supported chains fetched", Type.Array(SupportedChain)),
    401: Unauthorized(messages.authTokenRequired),
    429: TooManyRequests,
  },
};
