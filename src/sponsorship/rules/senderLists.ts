import { type PolicyOf, policiesOfKind, type ReadablePolicy } from "../../storage/policies";
import { pass, type Rule, refuse } from "../rule";

const RULE = "senderLists";

type SenderList = PolicyOf<"SENDER_ALLOWLIST"> | PolicyOf<"SENDER_BLOCKLIST">;

/**
 * Each sender list's addresses as a set, built once per rule as loaded: the setup cache keeps a paymaster's rule
 * objects for as long as its setup version is unchanged, so a list of 100,000 addresses is read into a set once per
 * change of the setup, never per request (loadSetup builds them as it loads).
 */
const sets = new WeakMap<SenderList, ReadonlySet<string>>();

/** The lower-case addresses of a SENDER_ALLOWLIST or SENDER_BLOCKLIST rule. */
export function senderSetOf(policy: SenderList): ReadonlySet<string> {
  let set = sets.get(policy);
  if (set === undefined) {
    set = new Set(policy.policyData.addresses.map((address) => address.toLowerCase()));
    sets.set(policy, set);
  }
  return set;
}

/** Builds the sets of a freshly loaded setup's sender lists, so that the first request after a load pays nothing. */
export function prepareSenderLists(policies: readonly ReadablePolicy[]): void {
  for (const policy of policiesOfKind(policies, "SENDER_BLOCKLIST")) senderSetOf(policy);
  for (const policy of policiesOfKind(policies, "SENDER_ALLOWLIST")) senderSetOf(policy);
}

/**
 * Rule 6: the sender is on no active SENDER_BLOCKLIST and on every active SENDER_ALLOWLIST (each list is a rule that
 * must hold, like every other rule; a sender on a blocklist is refused whatever an allowlist says). One set lookup per
 * list, whatever its length. The sender is the same field in every EntryPoint version (operationView); compared in
 * lower case.
 */
export const senderLists: Rule = {
  name: RULE,
  evaluate({ setup, userOp, version }) {
    let sender: string | undefined;
    for (const policy of policiesOfKind(setup.policies, "SENDER_BLOCKLIST")) {
      const set = senderSetOf(policy);
      sender ??= version.view(userOp).sender.toLowerCase();
      if (set.has(sender)) return refuse(RULE, `Sender ${sender} is on the blocklist "${policy.name}"`);
    }
    for (const policy of policiesOfKind(setup.policies, "SENDER_ALLOWLIST")) {
      const set = senderSetOf(policy);
      sender ??= version.view(userOp).sender.toLowerCase();
      if (!set.has(sender)) return refuse(RULE, `Sender ${sender} is not on the allowlist "${policy.name}"`);
    }
    return pass(RULE);
  },
};
