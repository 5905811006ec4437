import { invalidParams } from "../errors";
import { AsksForQuote, AsksForToken, EntryPointForm, HasV07Fields, NamesToken } from "../schemas/rpc/paramsForm";
import { schemaCheck } from "./schemaCheck";

const entryPointForm = schemaCheck<typeof EntryPointForm, [unknown, string, ...unknown[]]>(EntryPointForm);
const namesToken = schemaCheck(NamesToken);
const asksForToken = schemaCheck(AsksForToken);
const asksForQuote = schemaCheck(AsksForQuote);
const hasV07Fields = schemaCheck(HasV07Fields);

/**
 * pm_sponsorUserOperation's and pm_getFeeQuoteOrData's params, sorted by their form's schema
 * (src/schemas/rpc/paramsForm.ts) before any position is read; each position is then read by the schema its form
 * and version pick:
 * - `[userOp, modeObject]` (Biconomy's SDK): an EntryPoint v0.6 operation and the mode object;
 * - `[userOp, entryPointAddress, context?]`: the EntryPoint picks the version, the context the mode.
 */
export type SponsorParams =
  | { form: "modeObject"; userOp: unknown; modeObject: unknown }
  | {
      form: "entryPoint";
      userOp: unknown;
      /** A string, not yet checked to be an address. */
      entryPoint: string;
      context: unknown;
      /** The context names a fee token (`token`). */
      namesToken: boolean;
      /** The context asks for ERC20 mode: a `token`, or mode ERC20. */
      asksForToken: boolean;
      /** The context asks pm_getFeeQuoteOrData for quotes: ERC20 mode, a `preferredToken` or a `tokenList`. */
      asksForQuote: boolean;
    };

export function sponsorParamsForm(params: unknown[]): SponsorParams {
  if (entryPointForm.check(params)) {
    const [userOp, entryPoint, context] = params;
    return {
      form: "entryPoint",
      userOp,
      entryPoint,
      context,
      namesToken: namesToken.check(context),
      asksForToken: asksForToken.check(context),
      asksForQuote: asksForQuote.check(context),
    };
  }
  const [userOp, modeObject] = params;
  // The mode object form is EntryPoint v0.6's: an operation with v0.7 members there would be signed as a v0.6 one the
  // wallet cannot use, so it is refused with the form that serves it.
  if (hasV07Fields.check(userOp)) {
    throw invalidParams(
      "params[0] has EntryPoint v0.7 members (factory, paymaster fields or eip7702Auth), but [userOp, modeObject] " +
        "serves EntryPoint v0.6 operations; for v0.7 or v0.8 send [userOp, entryPointAddress, context]",
    );
  }
  return { form: "modeObject", userOp, modeObject };
}

/** ERC-7677's params `[userOp, entryPoint, chainId, context?]`, by the same form schemas. */
export interface Erc7677Params {
  userOp: unknown;
  /** Undefined when params[1] is not a string: only the v0.6 reading, whose address check names it, is left. */
  entryPoint: string | undefined;
  chainId: unknown;
  context: unknown;
  asksForToken: boolean;
}

export function erc7677ParamsForm(params: unknown[]): Erc7677Params {
  const [userOp, , chainId, context] = params;
  return {
    userOp,
    entryPoint: entryPointForm.check(params) ? params[1] : undefined,
    chainId,
    context,
    asksForToken: asksForToken.check(context),
  };
}
