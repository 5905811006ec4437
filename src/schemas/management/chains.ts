import Type from "typebox";
import { messages } from "../../errors";
import { Success, TooManyRequests, tokenOnly, Unauthorized } from "./common";

/**
 * An extension: the chains a paymaster can be created for, so that a client offers a choice instead of a guess, with
 * what each serves (our contracts per EntryPoint version) and whether the service's checks of them hold.
 */

const ServedEntryPoint = Type.Object(
  {
    entryPoint: Type.String({ examples: ["0x0000000071727De22E5E9d8BAf0edAc6f37da032"] }),
    verifyingPaymaster: Type.Optional(Type.String({ description: "SPONSORED mode's paymaster; absent: none" })),
    tokenPaymaster: Type.Optional(Type.String({ description: "ERC20 mode's paymaster; absent: none" })),
  },
  { description: "Our contracts for one EntryPoint version on the chain" },
);

const FailedCheck = Type.Object({
  entryPointVersion: Type.String({ examples: ["0.7"] }),
  kind: Type.String({ examples: ["verifying"], description: "verifying or token" }),
  address: Type.String(),
  check: Type.String({ examples: ["signer"], description: "code, entryPoint, signer or stake" }),
  detail: Type.String({ examples: ["the service's key 0x… is not in the paymaster's signer set"] }),
  fix: Type.Optional(Type.String({ description: "What the operator does about it" })),
});

export const ContractChecks = Type.Object(
  {
    status: Type.Union(
      [Type.Literal("ok"), Type.Literal("failing"), Type.Literal("unknown"), Type.Literal("not checked")],
      {
        description:
          "ok: every contract passed its checks; failing: one failed, and its sponsorships are refused; unknown: the " +
          "chain's node has not answered yet; not checked: no rpcUrl or none of our contracts on the chain",
      },
    ),
    checkedAt: Type.Optional(Type.String({ description: "When the last check ended, ISO 8601" })),
    failed: Type.Array(FailedCheck),
  },
  { description: "The service's checks of its contracts on the chain, repeated every 30 s" },
);

const SupportedChain = Type.Object({
  chainId: Type.Integer({ examples: [31337] }),
  name: Type.String({ examples: ["local"] }),
  entryPoints: Type.Record(Type.String({ pattern: "^\\d+\\.\\d+$" }), ServedEntryPoint, {
    description: 'The EntryPoint versions the chain serves ("0.6", "0.7", "0.8"): those with one of our paymasters',
  }),
  checks: ContractChecks,
});

export const listChainsSchema = {
  summary: "The chains this service sponsors on (the chainId a new paymaster may take) and what each serves",
  tags: ["paymasters"],
  security: tokenOnly,
  response: {
    200: Success("Supported chains fetched", Type.Array(SupportedChain)),
    401: Unauthorized(messages.authTokenRequired),
    429: TooManyRequests,
  },
};
