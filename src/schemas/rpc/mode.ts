import Type, { type Static, type TSchema } from "typebox";
import { Address } from "../primitives";
import { AnyObject, RpcBoolean } from "./fields";
import { withMessages } from "./messages";

/** How long a signed paymasterAndData stays valid unless the client asks otherwise, and the most it may ask. */
export const DEFAULT_EXPIRY_SECONDS = 300;
export const MAX_EXPIRY_SECONDS = 86_400;
/** How many tokens a tokenList may name: more is a malformed request, not a bigger quote. */
export const MAX_TOKEN_LIST = 50;

const nullable = <Schema extends TSchema>(schema: Schema, problem: string) =>
  Type.Optional(withMessages(Type.Union([schema, Type.Null()]), { problem }));

const SmartAccountInfo = withMessages(
  Type.Object(
    {
      name: withMessages(Type.String(), { problem: "must be a string", missing: "must be a string" }),
      version: withMessages(Type.String(), { problem: "must be a string", missing: "must be a string" }),
    },
    { description: "the account whose callData layout to decode, e.g. BICONOMY 2.0.0; other members are ignored" },
  ),
  { problem: "must be an object" },
);

const SponsorshipInfo = Type.Object(
  {
    webhookData: nullable(AnyObject, "must be an object"),
    smartAccountInfo: nullable(SmartAccountInfo, "must be an object"),
  },
  { description: "SPONSORED mode: data for the dApp's webhooks, and the account's layout" },
);

const TOKEN_ADDRESS = "must be a token address (0x followed by 40 hex digits)";
/** A token's address; empty strings and null count as absent (SDKs send them). */
const TokenAddress = Type.Union([Address, Type.Literal(""), Type.Null()]);

export const TokenInfo = Type.Object(
  {
    feeTokenAddress: Type.Optional(withMessages(TokenAddress, { problem: TOKEN_ADDRESS, showsValue: true })),
    preferredToken: Type.Optional(withMessages(TokenAddress, { problem: TOKEN_ADDRESS, showsValue: true })),
    tokenList: nullable(
      Type.Array(withMessages(TokenAddress, { problem: TOKEN_ADDRESS, showsValue: true }), {
        description: `at most ${MAX_TOKEN_LIST} token addresses`,
      }),
      "must be an array of token addresses",
    ),
  },
  {
    description:
      "ERC20 mode: feeTokenAddress (the token that pays, when signing), preferredToken or tokenList (when quoting)",
  },
);

export type TokenInfo = Static<typeof TokenInfo>;

/** The mode object's fields; the order is the order they are checked in, so the first problem named is stable. */
const modeFields = <Mode extends TSchema>(mode: Mode) => ({
  calculateGasLimits: nullable(RpcBoolean, "must be true or false"),
  mode,
  expiryDuration: nullable(
    Type.Integer({ minimum: 1, maximum: MAX_EXPIRY_SECONDS, default: DEFAULT_EXPIRY_SECONDS }),
    `must be a whole number of seconds from 1 to ${MAX_EXPIRY_SECONDS}`,
  ),
  sponsorshipInfo: nullable(SponsorshipInfo, "must be an object"),
  tokenInfo: nullable(TokenInfo, "must be an object"),
});

/**
 * What other clients put in an ERC-7677 or permissionless context, checked so that a wrong type is a clear -32602 and
 * never a surprise further on. The policy ids select nothing here: the URL's apiKey names the paymaster, and all its
 * active rules decide (docs/sponsorship-rpc.md, 'Context keys').
 */
const clientContextFields = {
  sponsorshipPolicyId: nullable(
    Type.String({
      maxLength: 200,
      description:
        "permissionless's sponsorship policy id: accepted and ignored, the paymaster's own rules decide every request",
    }),
    "must be a string of at most 200 characters (accepted and ignored: the paymaster's rules decide)",
  ),
  policyId: nullable(
    Type.String({
      maxLength: 200,
      description: "Alchemy's gas manager policy id: accepted and ignored, the paymaster's own rules decide",
    }),
    "must be a string of at most 200 characters (accepted and ignored: the paymaster's rules decide)",
  ),
  signingPhase: nullable(
    Type.Union([Type.Literal("commit"), Type.Literal("finalize")], {
      description: "Candide's parallel signing of EntryPoint v0.9: commit, then finalize once the user has signed",
    }),
    "must be commit or finalize",
  ),
};

/** SPONSORSHIP is an older spelling of SPONSORED that some clients still send. */
const Mode = withMessages(
  Type.Union([Type.Literal("SPONSORED"), Type.Literal("SPONSORSHIP"), Type.Literal("ERC20")], {
    description: "SPONSORED (SPONSORSHIP is the same) or ERC20",
  }),
  { problem: "must be SPONSORED or ERC20", missing: "is required: SPONSORED or ERC20", showsValue: true },
);

/** params[1] of pm_sponsorUserOperation and pm_getFeeQuoteOrData in Biconomy's form. */
export const ModeObject = withMessages(
  Type.Object(modeFields(Mode), { title: "ModeObject", description: "how to pay for the operation" }),
  { problem: "must be an object", missing: "is required: the mode object" },
);
export type ModeObject = Static<typeof ModeObject>;

/**
 * The context after an EntryPoint address (permissionless's params[2], ERC-7677's params[3]): the mode object's
 * fields with `mode` optional (SPONSORED when absent). Only SPONSORED mode is served this way.
 */
const OptionalMode = Type.Optional(
  withMessages(Type.Union([...Mode.anyOf, Type.Null()]), {
    problem: "must be SPONSORED or ERC20",
    showsValue: true,
  }),
);

export const SponsoredContext = withMessages(
  Type.Object(
    { ...modeFields(OptionalMode), ...clientContextFields },
    {
      title: "SponsoredContext",
      description: "the mode object's fields, mode SPONSORED when absent; unknown members are ignored",
    },
  ),
  { problem: "must be an object" },
);
export type SponsoredContext = Static<typeof SponsoredContext>;

const PERMIT_UINT = "must be a uint256, as 0x-prefixed hex or a decimal string";
const PERMIT_SIGNATURE = "must be the owner's signature as non-empty 0x-prefixed hex bytes";
const PERMIT_OBJECT = "must be an object { value, deadline, signature }";

/** A uint256 as the permit's fields take it: 0x hex of up to 64 digits or up to 78 decimal digits (range checked apart). */
const permitUint = (description: string) =>
  withMessages(Type.String({ pattern: "^(0x[0-9a-fA-F]{1,64}|\\d{1,78})$", description }), {
    problem: PERMIT_UINT,
    missing: PERMIT_UINT,
  });

/**
 * The EIP-2612 permit a wallet sends beside `token` for the up-front token paymaster (EntryPoint v0.7 on). The schema
 * checks its shape, with the words src/rpc/tokenContext.ts has always used; that reader then checks the range and the
 * deadline, and the flows the token, the value and the signature against the chain.
 */
const ContextPermit = withMessages(
  Type.Object(
    {
      value: permitUint(
        "the allowance the permit grants the up-front token paymaster, in the token's base units: at least the " +
          "operation's maximum charge (the stub's permitTypedData offers one)",
      ),
      deadline: permitUint(
        "the maximum uint256 (2^256 - 1), the only deadline the up-front token paymaster runs a permit with: a token " +
          "then never reads the clock in validation",
      ),
      signature: withMessages(
        Type.String({
          pattern: "^0x([0-9a-fA-F]{2})+$",
          description:
            "the sender's signature of the EIP-712 Permit (owner the sender, spender the up-front token paymaster, the " +
            "token's current nonce): 65 bytes from an EOA, an ERC-1271 account's own, or an ERC-6492 wrapper for an " +
            "account not deployed yet",
        }),
        { problem: PERMIT_SIGNATURE, missing: PERMIT_SIGNATURE },
      ),
    },
    {
      description:
        "ERC20 mode, EntryPoint v0.7 on, beside `token`: an EIP-2612 permit that lets the up-front token paymaster take " +
        "the maximum charge without an approve; other members are ignored",
    },
  ),
  { problem: PERMIT_OBJECT },
);

/**
 * The context of the flows that serve ERC20 mode too, as they read it and the OpenRPC document publishes it:
 * SponsoredContext's fields and ERC20 mode's fee token fields (src/rpc/tokenContext.ts; the flows check each token
 * against the chain's tokens). Empty strings and null count as absent, as in tokenInfo.
 */
export const PaymasterContext = withMessages(
  Type.Object(
    {
      ...modeFields(OptionalMode),
      ...clientContextFields,
      token: Type.Optional(
        withMessages(
          Type.Union([...TokenAddress.anyOf], {
            description: "the fee token that pays (Pimlico's name); selects ERC20 mode",
          }),
          { problem: TOKEN_ADDRESS, showsValue: true },
        ),
      ),
      preferredToken: Type.Optional(
        withMessages(
          Type.Union([...TokenAddress.anyOf], {
            description: "v0.7, v0.8 and v0.9, pm_getFeeQuoteOrData: quote this token only",
          }),
          { problem: TOKEN_ADDRESS, showsValue: true },
        ),
      ),
      tokenList: nullable(
        Type.Array(withMessages(Address, { problem: TOKEN_ADDRESS, showsValue: true }), {
          description: `v0.7, v0.8 and v0.9, pm_getFeeQuoteOrData: quote these tokens (at most ${MAX_TOKEN_LIST})`,
        }),
        "must be an array of token addresses",
      ),
      // Last, as it was read after every other member before it had a schema: the first problem named stays the same.
      permit: nullable(ContextPermit, PERMIT_OBJECT),
    },
    {
      title: "PaymasterContext",
      description:
        "the mode object's fields, mode SPONSORED when absent; a `token` selects ERC20 mode; " +
        "unknown members are ignored",
    },
  ),
  { problem: "must be an object" },
);
export type PaymasterContext = Static<typeof PaymasterContext>;
