import Type, { type Static } from "typebox";
import { Address } from "../primitives";
import { L1DataFeeSchema } from "./l1DataFee";
import { described } from "./problems";

/**
 * The chains file (CHAINS_FILE, docs/configuration.md, 'Chains file') as written on disk. Unknown fields are refused,
 * so that a misspelt field does not silently leave a default in place. What a schema cannot say (tokens need a token
 * paymaster, a chainId or a token listed twice, a zero address, a fixed rate above 2^256) src/config.ts checks after it.
 */

const ContractAddress = described(Address, "a 20-byte hex address (0x and 40 hex digits)");
const NonZeroAddress = described(Address, "a non-zero 20-byte hex address (0x and 40 hex digits)");
const HttpUrl = Type.String({ pattern: "^https?://\\S+$", description: "an http(s) URL" });

/** Our contracts for one EntryPoint version on one chain; the EntryPoint defaults to the version's canonical one. */
const EntryPointContractsSchema = Type.Object(
  {
    entryPoint: Type.Optional(ContractAddress),
    verifyingPaymaster: Type.Optional(ContractAddress),
    tokenPaymaster: Type.Optional(ContractAddress),
    /** The token paymaster that charges before the call (PermitTokenPaymasterV07); none exists for v0.6. */
    permitTokenPaymaster: Type.Optional(ContractAddress),
  },
  {
    additionalProperties: false,
    description: "an object with entryPoint, verifyingPaymaster, tokenPaymaster and permitTokenPaymaster addresses",
  },
);

/** The EntryPoint versions after v0.6 served on a chain; v0.6 keeps the chain's own top-level fields. */
export const EntryPointsSchema = Type.Object(
  {
    "0.7": Type.Optional(EntryPointContractsSchema),
    "0.8": Type.Optional(EntryPointContractsSchema),
    "0.9": Type.Optional(EntryPointContractsSchema),
  },
  {
    additionalProperties: false,
    description: "an object keyed by EntryPoint version (0.7, 0.8, 0.9; v0.6 uses the chain's own fields)",
  },
);

export const PRICE_FORMS =
  '{"fixedRate": "<token base units per 1e18 wei>"} or {"aggregator": "0x…", "maxAgeSeconds"?: n}';

/**
 * A fee token's price source: exactly one of `fixedRate` (price source 0) and `aggregator` (price source 1), which
 * src/config.ts checks, so that the message can say which one is in excess.
 */
const TokenPriceSchema = Type.Object(
  {
    fixedRate: Type.Optional(
      Type.Union(
        [Type.String({ pattern: "^\\d{1,78}$" }), Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })],
        {
          description: "a positive whole number of token base units per 1e18 wei, as a decimal string",
        },
      ),
    ),
    aggregator: Type.Optional(NonZeroAddress),
    maxAgeSeconds: Type.Optional(Type.Integer({ minimum: 1, description: "a positive whole number of seconds" })),
  },
  { additionalProperties: false, description: PRICE_FORMS },
);

export const NATIVE_USD_PRICE_FORMS = '{"fixed": "<dollars>"} or {"aggregator": "0x…", "maxAgeSeconds": n}';

/**
 * The native token's dollar price, for USD spending limits and cost caps: exactly one of `fixed` and `aggregator`,
 * and `maxAgeSeconds` with the aggregator only (src/config.ts checks, so that the message says what is wrong).
 */
const NativeUsdPriceSchema = Type.Object(
  {
    fixed: Type.Optional(
      Type.String({
        pattern: "^\\d{1,30}(\\.\\d{1,30})?$",
        description: 'a positive decimal number of US dollars per whole native token, as a string ("2345.67")',
      }),
    ),
    aggregator: Type.Optional(NonZeroAddress),
    maxAgeSeconds: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 31_536_000, description: "a whole number of seconds from 1 to 31536000" }),
    ),
  },
  { additionalProperties: false, description: NATIVE_USD_PRICE_FORMS },
);

const MIN_TOKEN_MARKUP = 1_000_000;
const MAX_TOKEN_MARKUP = 2_000_000;

const TokenSchema = Type.Object(
  {
    address: NonZeroAddress,
    symbol: Type.String({
      minLength: 1,
      maxLength: 32,
      description: "a non-empty string of at most 32 characters",
    }),
    decimals: Type.Integer({ minimum: 0, maximum: 36, description: "a whole number from 0 to 36" }),
    logoUrl: Type.Optional(HttpUrl),
    price: TokenPriceSchema,
    markup: Type.Optional(
      Type.Integer({
        minimum: MIN_TOKEN_MARKUP,
        maximum: MAX_TOKEN_MARKUP,
        description: `a whole number of millionths from ${MIN_TOKEN_MARKUP} (none) to ${MAX_TOKEN_MARKUP} (double), e.g. 1100000 for 10 %`,
      }),
    ),
    usdPrice: Type.Optional(
      Type.Number({ exclusiveMinimum: 0, description: "a positive number (US dollars per whole token)" }),
    ),
    /**
     * The token has an EIP-2612 permit the up-front token paymaster can run in validation: USDC's, which with the
     * maximum deadline never reads the clock and takes an ERC-1271 signature. OpenZeppelin's ERC20Permit always reads
     * the clock (banned in validation by ERC-7562), so it is not one.
     */
    permit: Type.Optional(Type.Boolean({ description: "true or false" })),
  },
  { additionalProperties: false, description: "an object describing one fee token" },
);

const ChainEntrySchema = Type.Object(
  {
    chainId: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: "a positive integer" }),
    name: Type.String({ minLength: 1, description: "a non-empty string" }),
    rpcUrl: Type.Optional(HttpUrl),
    bundlerUrl: Type.Optional(HttpUrl),
    entryPoint: Type.Optional(ContractAddress),
    verifyingPaymaster: Type.Optional(ContractAddress),
    tokenPaymaster: Type.Optional(ContractAddress),
    tokens: Type.Optional(Type.Array(TokenSchema, { description: "an array of fee tokens" })),
    entryPoints: Type.Optional(EntryPointsSchema),
    nativeUsdPrice: Type.Optional(NativeUsdPriceSchema),
    l1DataFee: Type.Optional(L1DataFeeSchema),
  },
  { additionalProperties: false, description: "an object describing one chain" },
);

export const ChainsFileSchema = Type.Array(ChainEntrySchema, {
  minItems: 1,
  description: "a non-empty JSON array of chains",
});

/** One chain entry as the file gives it (addresses in any case, the price as written). */
export type ChainEntry = Static<typeof ChainEntrySchema>;
export type TokenEntry = Static<typeof TokenSchema>;
export type EntryPointContracts = Static<typeof EntryPointContractsSchema>;
export type NativeUsdPriceEntry = Static<typeof NativeUsdPriceSchema>;
