import { type Address, isAddress, isAddressEqual } from "viem";
import type { LaterEntryPointVersion } from "../bindings/entryPoints/versions";
import { type PaymasterKind, paymasterForEntryPoint, type SponsoringChain } from "../chain/sponsoringChains";
import { invalidParams, RpcError, SPONSORSHIP_REFUSED } from "../errors";

/** A request's EntryPoint when it is a v0.7 or v0.8 one the chain serves, with our paymaster for it. */
export interface LaterEntryPoint {
  version: LaterEntryPointVersion;
  entryPoint: Address;
  paymaster: Address;
}

/**
 * The version a request's EntryPoint (params[1]) picks. Undefined for anything that is not a later EntryPoint of this
 * chain: the caller then reads the request as v0.6, whose own checks name what is wrong (a malformed address, or an
 * EntryPoint the chain does not serve, each -32602, as before v0.7 was served).
 *
 * A v0.7 or v0.8 EntryPoint the chain lists but has none of our paymasters of `kind` for is refused with -32003 and the
 * reason, as a v0.6 request is on a chain without a verifying paymaster.
 */
export function laterEntryPoint(
  chain: SponsoringChain,
  value: string,
  kind: PaymasterKind = "verifying",
): LaterEntryPoint | undefined {
  if (!isAddress(value, { strict: false })) return undefined;
  const listed = [...chain.entryPoints.values()].some((served) => isAddressEqual(served.entryPoint, value));
  if (!listed) return undefined;
  const answer = paymasterForEntryPoint(chain, value, kind);
  if (!answer.served) throw new RpcError(SPONSORSHIP_REFUSED, `Not sponsored: ${answer.reason}`);
  if (answer.version === "0.6") return undefined;
  return { version: answer.version, entryPoint: answer.entryPoint, paymaster: answer.paymaster };
}

/**
 * A v0.6 operation's EntryPoint and paymaster: the chain's own, of the kind asked (the token paymaster when the
 * request names a fee token). The paymaster is undefined where the chain has none; the steps refuse that in words.
 */
export function v06Target(chain: SponsoringChain, asksForToken: boolean) {
  return { entryPoint: chain.entryPoint, paymaster: asksForToken ? chain.tokenPaymaster : chain.verifyingPaymaster };
}

/** The -32602 for an EntryPoint the chain does not serve at all, naming every EntryPoint it does serve. */
export function unsupportedEntryPoint(chain: SponsoringChain, entryPoint: string, label = "params[1]"): RpcError {
  const answer = paymasterForEntryPoint(chain, entryPoint, "verifying");
  return invalidParams(`${label}: ${answer.served ? `EntryPoint ${entryPoint} is not served` : answer.reason}`);
}
