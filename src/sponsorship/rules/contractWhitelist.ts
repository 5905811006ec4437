import { decodeAccountCalls } from "../callData";
import { pass, type Rule, refuse } from "../rule";
import { senderDeploymentOf } from "../senderDeployment";

/** The SDK recognises this text; the address and selector that missed follow it. */
export const CONTRACT_NOT_FOUND_REASON = "Smart contract data not found";

/**
 * Rule 3: with whitelisted contracts, every call of the operation must go to one of them, to a whitelisted method (or
 * carry no data at all: a plain transfer). What cannot be decoded for certain is refused. The account's callData is
 * read one level deep: a call back into the account (a batch calling the account's own execute) is refused, whatever
 * the whitelist holds, rather than decoded again.
 */
export const contractWhitelist: Rule = {
  name: "contractWhitelist",
  async evaluate(input) {
    const { setup, userOp, smartAccount, version } = input;
    if (setup.contracts.size === 0) return pass(this.name);
    const op = version.view(userOp);
    // A deployment alone is rule 2's business; an operation that neither deploys nor calls only burns gas. Whether it
    // deploys is the sender's code (a deployed account naming a factory deploys nothing).
    if (op.callData === "0x") {
      const { state } = await senderDeploymentOf(input).read();
      return state === "deploys" ? pass(this.name) : refuse(this.name, "callData is empty: nothing to sponsor");
    }
    const decoded = decodeAccountCalls(op.callData, smartAccount);
    if (!decoded.ok) return refuse(this.name, `${CONTRACT_NOT_FOUND_REASON}: ${decoded.reason}`);
    if (decoded.calls.length === 0) return refuse(this.name, "callData makes no call: nothing to sponsor");
    const self = op.sender.toLowerCase();
    for (const call of decoded.calls) {
      // A call to the account itself would run whatever it carries (another execute, a module install) unchecked.
      if (call.to.toLowerCase() === self) {
        return refuse(
          this.name,
          `${CONTRACT_NOT_FOUND_REASON}: a call from the account to itself (${self}) is never sponsored: ` +
            "what it runs is not checked",
        );
      }
      const selectors = setup.contracts.get(call.to.toLowerCase());
      if (!selectors) {
        return refuse(
          this.name,
          `${CONTRACT_NOT_FOUND_REASON}: ${call.to.toLowerCase()} is not a whitelisted contract`,
        );
      }
      if (call.data === "0x") continue;
      const selector = call.data.slice(0, 10).toLowerCase();
      if (call.data.length < 10 || !selectors.has(selector)) {
        return refuse(
          this.name,
          `${CONTRACT_NOT_FOUND_REASON}: selector ${selector} is not a whitelisted method of ${call.to.toLowerCase()}`,
        );
      }
    }
    return pass(this.name);
  },
};
