import type { TokenConfig } from "../config";
import type { FeeQuote } from "../schemas/rpc/pm_getFeeQuoteOrData";
import type { ActionContext } from "./context";

/**
 * Quotes each requested token on its own with `quoteOne` (both EntryPoint versions' quotes). A token that cannot be
 * quoted now while others can (no usable price; a simulation the token paymaster refuses when the sender holds none of
 * it) is logged and added to `unsupported`; when no token can be quoted, the first one's reason is the error.
 */
export async function quoteEachToken(
  ctx: ActionContext,
  tokens: readonly TokenConfig[],
  unsupported: string[],
  quoteOne: (token: TokenConfig) => Promise<FeeQuote>,
): Promise<FeeQuote[]> {
  const outcomes = await Promise.all(
    tokens.map(async (token): Promise<{ quote: FeeQuote } | { token: TokenConfig; error: unknown }> => {
      try {
        return { quote: await quoteOne(token) };
      } catch (error) {
        return { token, error };
      }
    }),
  );
  const feeQuotes = outcomes.flatMap((outcome) => ("quote" in outcome ? [outcome.quote] : []));
  const failed = outcomes.flatMap((outcome) => ("error" in outcome ? [outcome] : []));
  if (feeQuotes.length === 0 && failed[0]) throw failed[0].error;
  for (const { token, error } of failed) {
    ctx.log.warn(
      { chainId: ctx.chain.chainId, token: token.address, reason: (error as Error).message },
      "token not quoted",
    );
    unsupported.push(token.address);
  }
  return feeQuotes;
}
