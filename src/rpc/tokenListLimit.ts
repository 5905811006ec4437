import { invalidParams } from "../errors";
import { MAX_TOKEN_LIST } from "../schemas/rpc/mode";

/** A quote's tokenList names at most MAX_TOKEN_LIST tokens: more is a malformed request, not a bigger quote. */
export function limitTokenList(list: readonly unknown[] | null | undefined, label: string): void {
  if (list && list.length > MAX_TOKEN_LIST) throw invalidParams(`${label} may name at most ${MAX_TOKEN_LIST} tokens`);
}
