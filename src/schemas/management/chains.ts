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
    permitTokenPaymaster: Type.Optional(
      Type.String({
        description:
          "ERC20 mode's paymaster that charges before the call (v0.7 on), taking a permit instead of an approve; " +
          "absent: none",
      }),
    ),
  },
  { description: "Our contracts for one EntryPoint version on the chain" },
);

const FailedCheck = Type.Object({
  entryPointVersion: Type.Optional(Type.String({ examples: ["0.7"] })),
  kind: Type.Optional(Type.String({ examples: ["verifying"], description: "verifying or token" })),
  address: Type.Optional(
    Type.String({ description: "The contract checked: the EntryPoint, a paymaster or a fee token" }),
  ),
  check: Type.String({
    examples: ["signer"],
    description: "chainId, entryPoint, code, owner, signer, stake, deposit or feeToken",
  }),
  detail: Type.String({ examples: ["the service's key 0x… is not in the paymaster's signer set"] }),
  fix: Type.Optional(Type.String({ description: "What the operator does about it" })),
});

const ContractChecks = Type.Object(
  {
    status: Type.Union(
      [Type.Literal("ok"), Type.Literal("failing"), Type.Literal("unknown"), Type.Literal("not checked")],
      {
        description:
          "ok: every contract passed its checks; failing: one failed, and its sponsorships are refused; unknown: the " +
          "chain's node has not answered yet; not checked: no rpcUrl or none of our contracts on the chain",
      },
    ),
    checkedAt: Type.Optional(Type.String({ description: "When the last check that read the chain ended, ISO 8601" })),
    failed: Type.Array(FailedCheck),
    readError: Type.Optional(
      Type.String({ description: "Why the latest check could not read the chain; the verdict is then older" }),
    ),
  },
  { description: "The service's checks of its contracts on the chain, repeated every 30 s" },
);

const L1DataFee = Type.Object(
  {
    model: Type.Union(
      [Type.Literal("none"), Type.Literal("op-stack"), Type.Literal("arbitrum"), Type.Literal("bundler")],
      {
        description:
          "How the chain charges for L1 data, which preVerificationGas repays the bundler. none: no L1 fee; op-stack: " +
          "the GasPriceOracle's getL1Fee (and operator fee); arbitrum: NodeInterface's gasEstimateL1Component; " +
          "bundler: a model of the network's own that only the chain's bundler prices (the service estimates only " +
          "through it)",
      },
    ),
    source: Type.Union([Type.Literal("chains file"), Type.Literal("chain id")], {
      description: "Where the model came from: the chains file's l1DataFee, or the chain id's known network",
    }),
    oracle: Type.Optional(Type.String({ description: "op-stack and arbitrum: the contract the fee is read from" })),
    marginPercent: Type.Optional(
      Type.Integer({ description: "op-stack and arbitrum: the margin added over the fee read, in percent" }),
    ),
    network: Type.Optional(Type.String({ description: "bundler: the network whose model the bundler prices" })),
  },
  { description: "The chain's L1 data fee model" },
);

const FeeToken = Type.Object(
  {
    address: Type.String({ examples: ["0x036cbd53842c5426634e7929541ec2318f3dcf7e"] }),
    symbol: Type.String({ examples: ["USDC"] }),
    decimals: Type.Integer({ examples: [6] }),
    permit: Type.Boolean({
      description:
        "Whether the token has an EIP-2612 permit that runs in validation (USDC's, which never reads the clock with " +
        "the maximum deadline): a wallet may then pay its first operation with a signed permit instead of an approve",
    }),
  },
  { description: "A token the chain's operations can pay their gas in (ERC20 mode)" },
);

const SupportedChain = Type.Object({
  chainId: Type.Integer({ examples: [31337] }),
  name: Type.String({ examples: ["local"] }),
  entryPoints: Type.Record(Type.String({ pattern: "^\\d+\\.\\d+$" }), ServedEntryPoint, {
    description:
      'The EntryPoint versions the chain serves ("0.6", "0.7", "0.8", "0.9"): those with one of our paymasters',
  }),
  feeTokens: Type.Array(FeeToken, { description: "The chain's fee tokens (ERC20 mode); empty: none" }),
  l1DataFee: L1DataFee,
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
