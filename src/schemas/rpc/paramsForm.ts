import Type from "typebox";

/**
 * The forms of a method's params, checked before any position is read: which form a request has picks the schemas
 * its positions are then read with (src/rpc/paramsForm.ts). These schemas decide the form only; every value is
 * checked, and every -32602 message made, by the position's own schema afterwards.
 */

/** A member that is given: any JSON value but null (absent and null mean the same to every reader here). */
const Given = Type.Union([
  Type.String(),
  Type.Number(),
  Type.Boolean(),
  Type.Array(Type.Unknown()),
  Type.Record(Type.String(), Type.Unknown()),
]);

/** An object with `name` given. */
const withMember = (name: string) => Type.Object({ [name]: Given });

/** `[userOp, entryPointAddress, context?]` (permissionless, Pimlico): a string second; any other second is a mode object. */
export const EntryPointForm = Type.Array(Type.Unknown(), { prefixItems: [Type.Unknown(), Type.String()], minItems: 2 });

/** A context naming a fee token (Pimlico's `token`). */
export const NamesToken = withMember("token");

/** A context asking for ERC20 mode: a `token`, or mode ERC20 as the mode object spells it. */
export const AsksForToken = Type.Union([NamesToken, Type.Object({ mode: Type.Literal("ERC20") })]);

/** pm_getFeeQuoteOrData's context asking for quotes: ERC20 mode, or a `preferredToken` or `tokenList`. */
export const AsksForQuote = Type.Union([...AsksForToken.anyOf, withMember("preferredToken"), withMember("tokenList")]);

/** The members only an EntryPoint v0.7 or v0.8 operation has: with one of them given, it is not a v0.6 operation. */
export const HasV07Fields = Type.Union(
  [
    "factory",
    "factoryData",
    "paymaster",
    "paymasterData",
    "paymasterVerificationGasLimit",
    "paymasterPostOpGasLimit",
    "eip7702Auth",
  ].map(withMember),
);
