import type { Policy } from "../../storage/policies";
import { viewOf } from "../operationView";
import { pass, type Rule, refuse } from "../rule";

const RULE = "senderLists";

const STORED_ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/**
 * Each sender list's addresses as a set, built once per rule as loaded: the setup cache keeps a paymaster's rule
 * objects for as long as its setup version is unchanged, so a list of 100,000 addresses is read into a set once per
 * change of the setup, never per request (loadSetup builds them as it loads). null: data that cannot be read.
 */
const sets = new WeakMap<Policy, ReadonlySet<string> | null>();

function setOf(addresses: unknown): ReadonlySet<string> | null {
  if (!Array.isArray(addresses)) return null;
  const set = new Set<string>();
  for (const address of addresses) {
    if (typeof address !== "string" || !STORED_ADDRESS.test(address)) return null;
    set.add(address.toLowerCase());
  }
  return set;
}

/** The lower-case addresses of a SENDER_ALLOWLIST or SENDER_BLOCKLIST rule; null when its data cannot be read. */
export function senderSetOf(policy: Policy): ReadonlySet<string> | null {
  let set = sets.get(policy);
  if (set === undefined) {
    set = setOf(policy.policyData.addresses);
    sets.set(policy, set);
  }
  return set;
}

const isSenderList = (policy: Policy) =>
  policy.policyType === "SENDER_ALLOWLIST" || policy.policyType === "SENDER_BLOCKLIST";

/** Builds the sets of a freshly loaded setup's sender lists, so that the first request after a load pays nothing. */
export function prepareSenderLists(policies: readonly Policy[]): void {
  for (const policy of policies) if (isSenderList(policy)) senderSetOf(policy);
}

const unreadable = (policy: Policy) => refuse(RULE, `Sender list "${policy.name}" has unreadable settings`);

/**
 * Rule 6: the sender is on no active SENDER_BLOCKLIST and on every active SENDER_ALLOWLIST (each list is a rule that
 * must hold, like every other rule; a sender on a blocklist is refused whatever an allowlist says). One set lookup per
 * list, whatever its length. The sender is the same field in every EntryPoint version (operationView); compared in
 * lower case. Fail-closed: a list whose data cannot be read refuses everyone.
 */
export const senderLists: Rule = {
  name: RULE,
  evaluate({ setup, userOp }) {
    let sender: string | undefined;
    for (const policy of setup.policies) {
      if (policy.policyType !== "SENDER_BLOCKLIST") continue;
      const set = senderSetOf(policy);
      if (!set) return unreadable(policy);
      sender ??= viewOf(userOp).sender.toLowerCase();
      if (set.has(sender)) return refuse(RULE, `Sender ${sender} is on the blocklist "${policy.name}"`);
    }
    for (const policy of setup.policies) {
      if (policy.policyType !== "SENDER_ALLOWLIST") continue;
      const set = senderSetOf(policy);
      if (!set) return unreadable(policy);
      sender ??= viewOf(userOp).sender.toLowerCase();
      if (!set.has(sender)) return refuse(RULE, `Sender ${sender} is not on the allowlist "${policy.name}"`);
    }
    return pass(RULE);
  },
};
