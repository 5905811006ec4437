import type { FastifyInstance } from "fastify";
import { contractsOf } from "../actions/contracts";
import { pageRequestOf } from "../actions/pageCursor";
import {
  createPolicy,
  policiesOf,
  type RuleEntry,
  rulesPageOf,
  setPolicyActive,
  updatePolicy,
  updateSpendingLimit,
} from "../actions/policies";
import {
  createPolicySchema,
  listPoliciesSchema,
  setPolicyActiveSchema,
  updateLimitSchema,
  updatePolicySchema,
} from "../schemas/management/policies";
import { currentCycleStartMs, cycleLengthMs } from "../sponsorship/spendingLimit";
import type { Account } from "../storage/accounts";
import type { SmartContract } from "../storage/contracts";
import type { Paymaster } from "../storage/paymasters";
import type { Policy } from "../storage/policies";
import { dappGuard } from "./auth";
import { success } from "./envelope";
import { type Management, noBodyIsEmpty, typed, urlCheckOf } from "./management";

function policyView(policy: Policy, paymaster: Paymaster, account: Account, nowMs: number) {
  // A rule whose stored settings cannot be read is shown as stored, so that the dApp sees what to replace.
  let data = policy.policyData;
  if (policy.unreadable === undefined && policy.policyType === "PAYMASTER_SA_LIMIT" && policy.cycleStartMs !== null) {
    const { cycleDuration } = policy.policyData;
    data = {
      ...policy.policyData,
      startTimeInEpoch: currentCycleStartMs(policy.cycleStartMs, cycleDuration, nowMs),
      durationInMs: cycleLengthMs(policy.cycleStartMs, cycleDuration, nowMs),
    };
  }
  return {
    _id: policy.id,
    name: policy.name,
    policyType: policy.policyType,
    organisationId: account.id,
    paymasterId: paymaster.id,
    createdBy: policy.createdBy,
    chainId: paymaster.chainId,
    active: policy.active,
    policyData: data,
  };
}

/**
 * Whitelisted contracts are rules too (docs/sponsorship-rpc.md, 'Sponsorship rules', rule 3), so the rule list shows
 * them in the same shape.
 */
function whitelistedContractView(contract: SmartContract, paymaster: Paymaster, account: Account) {
  return {
    _id: contract.id,
    name: contract.name,
    policyType: "WHITELISTED_CONTRACT",
    organisationId: account.id,
    paymasterId: paymaster.id,
    createdBy: account.id,
    chainId: paymaster.chainId,
    active: true,
    policyData: { address: contract.address, whitelistedMethods: contract.whitelistedMethods },
  };
}

/**
 * What a rule's creation or update may weigh: a sender list of 100,000 addresses is about 4.5 MB of JSON (5 MB
 * indented), above the service's general body limit. Only these two routes take it; the JSON is parsed before the
 * credentials are checked, as for every route, so this is also what an unauthenticated client can make them parse.
 */
const POLICY_BODY_LIMIT_BYTES = 8 * 1024 * 1024;

/** Endpoints 8 to 14: the rules of a paymaster. */
export function policyRoutes(app: FastifyInstance, { ctx, actions, credentials }: Management): void {
  const api = typed(app);
  const dapp = dappGuard(credentials);
  const checkUrl = urlCheckOf(app, ctx);
  const bodyLimit = Math.max(ctx.bodyLimitBytes, POLICY_BODY_LIMIT_BYTES);

  api.post(
    "/paymaster-policy",
    { schema: createPolicySchema, preValidation: dapp.preValidation, bodyLimit },
    async (request) => {
      const { account, paymaster } = dapp.of(request);
      const policy = await createPolicy(actions, account, paymaster, request.body, checkUrl);
      return success("Paymaster Policy created successfully", policyView(policy, paymaster, account, actions.now()));
    },
  );

  api.get("/paymaster-policy", { schema: listPoliciesSchema, preValidation: dapp.preValidation }, async (request) => {
    const { account, paymaster } = dapp.of(request);
    const page = pageRequestOf(request.query, ["policy", "contract"]);
    if (page) {
      const { items, nextCursor } = await rulesPageOf(actions, paymaster, page);
      const now = actions.now();
      const view = (entry: RuleEntry) =>
        "policy" in entry
          ? policyView(entry.policy, paymaster, account, now)
          : whitelistedContractView(entry.contract, paymaster, account);
      return { ...success("Paymaster Policies found!", items.map(view)), nextCursor };
    }
    const [policies, contracts] = await Promise.all([policiesOf(actions, paymaster), contractsOf(actions, paymaster)]);
    const now = actions.now();
    return success("Paymaster Policies found!", [
      ...policies.map((policy) => policyView(policy, paymaster, account, now)),
      ...contracts.map((contract) => whitelistedContractView(contract, paymaster, account)),
    ]);
  });

  // A PATCH without a body only restarts the cycle.
  api.patch(
    "/paymaster-policy/limit/:policyId",
    { schema: updateLimitSchema, preValidation: [dapp.preValidation, noBodyIsEmpty] },
    async (request) => {
      await updateSpendingLimit(actions, dapp.of(request).paymaster, request.params.policyId, request.body);
      return success("Paymaster Limit updated");
    },
  );

  // One segment after the prefix: find-my-way matches the two-segment routes (limit/…, activate/…, deactivate/…) on
  // their static part, so none of them is ever read as a policyId here.
  api.patch(
    "/paymaster-policy/:policyId",
    { schema: updatePolicySchema, preValidation: dapp.preValidation, bodyLimit },
    async (request) => {
      const { account, paymaster } = dapp.of(request);
      const policy = await updatePolicy(actions, paymaster, request.params.policyId, request.body, checkUrl);
      return success("Paymaster Policy updated", policyView(policy, paymaster, account, actions.now()));
    },
  );

  for (const [action, active, message] of [
    ["deactivate", false, "Paymaster Policy Deactivated!"],
    ["activate", true, "Paymaster Policy Activated!"],
  ] as const) {
    api.patch(
      `/paymaster-policy/${action}/:policyId`,
      { schema: setPolicyActiveSchema(active, message), preValidation: dapp.preValidation },
      async (request) => {
        await setPolicyActive(actions, dapp.of(request).paymaster, request.params.policyId, active);
        return success(message);
      },
    );
  }
}
