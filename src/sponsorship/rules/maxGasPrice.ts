import { formatGwei, parseGwei } from "viem";
import { type PolicyOf, policiesOfKind } from "../../storage/policies";
import { pass, type Rule, refuse } from "../rule";

const RULE = "maxGasPrice";

/**
 * Gwei as the policy stores them (a JSON number, decimals allowed) in wei, exactly as written: 0.05 gwei is 5·10^7
 * wei. A number JavaScript prints with an exponent (1e-7) is written out first, since parseGwei reads decimals only.
 */
function gweiToWei(gwei: number): bigint {
  const text = /e/i.test(String(gwei)) ? gwei.toFixed(18) : String(gwei);
  return parseGwei(text);
}

/** Why `policy` refuses fees of `maxFee` and `priorityFee` wei per gas, or undefined when they are within its cap. */
function overCap(policy: PolicyOf<"MAX_GAS_PRICE">, maxFee: bigint, priorityFee: bigint): string | undefined {
  const { maxFeePerGasGwei, maxPriorityFeePerGasGwei } = policy.policyData;
  const feeCap = gweiToWei(maxFeePerGasGwei);
  if (maxFee > feeCap) {
    return (
      `Gas price cap "${policy.name}" exceeded: maxFeePerGas is ${formatGwei(maxFee)} gwei, ` +
      `above the cap of ${formatGwei(feeCap)} gwei`
    );
  }
  if (maxPriorityFeePerGasGwei === undefined) return undefined;
  const priorityCap = gweiToWei(maxPriorityFeePerGasGwei);
  if (priorityFee <= priorityCap) return undefined;
  return (
    `Gas price cap "${policy.name}" exceeded: maxPriorityFeePerGas is ${formatGwei(priorityFee)} gwei, ` +
    `above the cap of ${formatGwei(priorityCap)} gwei`
  );
}

/**
 * Rule 4, beside the cost cap (docs/sponsorship-rpc.md): the operation's fees are at most every active MAX_GAS_PRICE cap, so that a fee spike cannot burn the
 * deposit. It reads the fees the signature would cover: the client's, or those the service chose when the client sent
 * none. At the ERC-7677 stub a fee not sent yet counts as zero (src/sponsorship/eligibility.ts), so a refusal there
 * holds for whatever fee the bundler picks later; v0.6 and later versions carry the same two fee fields.
 */
export const maxGasPrice: Rule = {
  name: RULE,
  evaluate({ setup, userOp }) {
    for (const policy of policiesOfKind(setup.policies, "MAX_GAS_PRICE")) {
      const reason = overCap(policy, userOp.maxFeePerGas ?? 0n, userOp.maxPriorityFeePerGas ?? 0n);
      if (reason !== undefined) return refuse(RULE, reason);
    }
    return pass(RULE);
  },
};
