import type { Static } from "typebox";
import { badRequest, PolicyNameExistsError, PolicyNotFoundError } from "../errors";
import {
  type CreatePolicyBody,
  CycleDurationObject,
  type CycleDuration as CycleDurationSchema,
  POLICY_DATA_SCHEMAS,
  policyKindFixed,
  type StoredPolicyData,
  TIME_WINDOW_BACKWARDS,
  TIME_WINDOW_EMPTY,
  UPDATE_POLICY_EMPTY,
  type UpdateLimitBody,
  type UpdatePolicyBody,
  usdNeedsPrice,
} from "../schemas/management/policies";
import type { PolicyType } from "../schemas/management/policyKinds";
import { assertValid } from "../schemas/validate";
import { type CycleDuration, parseCycleDurationText, type SpendingLimit } from "../sponsorship/spendingLimit";
import type { Account } from "../storage/accounts";
import { listContractsPage, type SmartContract } from "../storage/contracts";
import type { Paymaster } from "../storage/paymasters";
import {
  findPolicy,
  insertPolicy,
  listPolicies,
  listPoliciesPage,
  POLICY_NAME_PER_PAYMASTER,
  type Policy,
  setPolicyActive as storePolicyActive,
  updatePolicy as storePolicyUpdate,
  updateLimit,
} from "../storage/policies";
import { callableUrl } from "./httpUrl";
import { isUuid, type ManagementContext, type UrlCheck, unlessTaken } from "./managementContext";
import { type Page, type PageCursor, type PageRequest, pageOf } from "./pageCursor";

const nameTaken = { [POLICY_NAME_PER_PAYMASTER]: () => new PolicyNameExistsError() };

/** The object form of a cycle; the text form ("3 hour") is read into it and checked like it. */
function cycleOf(value: Static<typeof CycleDurationSchema>, label: string): CycleDuration {
  if (typeof value !== "string") return { value: value.value, unit: value.unit };
  const parsed = parseCycleDurationText(value);
  assertValid(CycleDurationObject, parsed, label);
  return parsed as CycleDuration;
}

/** A COUNT limit counts whole user operations; the schema cannot see the sibling that says which kind it is. */
function wholeForCount(threshold: number, thresholdType: SpendingLimit["thresholdType"], label: string): number {
  if (thresholdType === "COUNT" && !Number.isInteger(threshold)) {
    throw badRequest(`${label} must be a whole number of user operations when thresholdType is COUNT`);
  }
  return threshold;
}

/**
 * A USD rule on a chain whose native token has no configured dollar price could never sponsor anything: refused when
 * it is set, so the dApp learns it then (the sponsorship would refuse too, fail-closed).
 */
function pricedIfUsd(ctx: ManagementContext, paymaster: Paymaster, thresholdType: string, label: string): void {
  if (thresholdType === "USD" && !ctx.chains.get(paymaster.chainId)?.nativeUsdPrice) {
    throw badRequest(usdNeedsPrice(label, paymaster.chainId));
  }
}

async function policyDataOf(
  body: CreatePolicyBody,
  checkUrl: UrlCheck,
  priced: (thresholdType: string) => void,
): Promise<StoredPolicyData[PolicyType]> {
  switch (body.policyType) {
    case "PAYMASTER_SA_LIMIT": {
      const data = body.policyData;
      priced(data.thresholdType);
      const limit: SpendingLimit = {
        type: data.type,
        cycleDuration: cycleOf(data.cycleDuration, "policyData.cycleDuration"),
        thresholdType: data.thresholdType,
        threshold: wholeForCount(data.threshold, data.thresholdType, "policyData.threshold"),
      };
      return { ...limit };
    }
    case "WEBHOOK": {
      return { url: await callableUrl(body.policyData.url, "policyData.url", checkUrl) };
    }
    case "WALLET_DEPLOYMENT":
      return { operator: "walletDeployment" };
    case "MAX_COST_PER_OP":
      priced(body.policyData.thresholdType);
      return { threshold: body.policyData.threshold, thresholdType: body.policyData.thresholdType };
    case "TIME_WINDOW": {
      const { startTimeInEpoch, endTimeInEpoch } = body.policyData;
      if (startTimeInEpoch === undefined && endTimeInEpoch === undefined) throw badRequest(TIME_WINDOW_EMPTY);
      if (startTimeInEpoch !== undefined && endTimeInEpoch !== undefined && startTimeInEpoch >= endTimeInEpoch) {
        throw badRequest(TIME_WINDOW_BACKWARDS);
      }
      return {
        ...(startTimeInEpoch === undefined ? {} : { startTimeInEpoch }),
        ...(endTimeInEpoch === undefined ? {} : { endTimeInEpoch }),
      };
    }
    case "SENDER_ALLOWLIST":
    case "SENDER_BLOCKLIST":
      // Addresses compare in lower case, so a repeat in another case is the same sender: kept once, where first given.
      return { addresses: [...new Set(body.policyData.addresses.map((address) => address.toLowerCase()))] };
    case "MAX_GAS_PRICE": {
      const { maxFeePerGasGwei, maxPriorityFeePerGasGwei } = body.policyData;
      return { maxFeePerGasGwei, ...(maxPriorityFeePerGasGwei === undefined ? {} : { maxPriorityFeePerGasGwei }) };
    }
    case "RATE_LIMIT":
      return {
        scope: body.policyData.scope,
        limit: body.policyData.limit,
        windowSeconds: body.policyData.windowSeconds,
      };
  }
}

export const policiesOf = (ctx: ManagementContext, paymaster: Paymaster): Promise<Policy[]> =>
  listPolicies(ctx.db, paymaster.id);

/** An entry of the rule list: a rule, or a whitelisted contract shown as one. */
export type RuleEntry = { policy: Policy } | { contract: SmartContract };

/**
 * One page of the rule list: the rules and then the whitelisted contracts, as the whole list has them. A page that
 * ends among the rules reads on into the contracts, so no page is short while more follow.
 */
export async function rulesPageOf(
  ctx: ManagementContext,
  paymaster: Paymaster,
  request: PageRequest,
): Promise<Page<RuleEntry>> {
  const wanted = request.limit + 1;
  const rows: { item: RuleEntry; cursor: PageCursor }[] = [];
  if (request.after?.part !== "contract") {
    const policies = await listPoliciesPage(ctx.db, paymaster.id, request.after?.key, wanted);
    for (const { policy, key } of policies) rows.push({ item: { policy }, cursor: { part: "policy", key } });
  }
  if (rows.length < wanted) {
    const after = request.after?.part === "contract" ? request.after.key : undefined;
    const contracts = await listContractsPage(ctx.db, paymaster.id, after, wanted - rows.length);
    for (const { contract, key } of contracts) rows.push({ item: { contract }, cursor: { part: "contract", key } });
  }
  return pageOf(rows, request.limit);
}

/** A new rule; a spending limit's first cycle starts now. */
export async function createPolicy(
  ctx: ManagementContext,
  account: Account,
  paymaster: Paymaster,
  body: CreatePolicyBody,
  checkUrl: UrlCheck,
): Promise<Policy> {
  const policyData = await policyDataOf(body, checkUrl, (thresholdType) =>
    pricedIfUsd(ctx, paymaster, thresholdType, "policyData.thresholdType"),
  );
  const policy = await unlessTaken(
    insertPolicy(ctx.db, {
      paymasterId: paymaster.id,
      createdBy: account.id,
      name: body.name,
      policyType: body.policyType,
      policyData,
      cycleStartMs: body.policyType === "PAYMASTER_SA_LIMIT" ? ctx.now() : null,
    }),
    nameTaken,
  );
  ctx.setupChanged(paymaster.apiKey);
  return policy;
}

async function policyOf(ctx: ManagementContext, paymaster: Paymaster, policyId: string): Promise<Policy> {
  const policy = isUuid(policyId) ? await findPolicy(ctx.db, paymaster.id, policyId) : undefined;
  if (!policy) throw new PolicyNotFoundError();
  return policy;
}

/** Changes a spending limit; what the body leaves out stays, and the cycle restarts now. */
export async function updateSpendingLimit(
  ctx: ManagementContext,
  paymaster: Paymaster,
  policyId: string,
  body: UpdateLimitBody,
): Promise<void> {
  const policy = await policyOf(ctx, paymaster, policyId);
  if (policy.policyType !== "PAYMASTER_SA_LIMIT") {
    throw badRequest(`Policy ${policy.id} is a ${policy.policyType} policy; only PAYMASTER_SA_LIMIT has a limit`);
  }
  if (policy.unreadable !== undefined) {
    throw badRequest(
      `Policy ${policy.id} has unreadable settings (${policy.unreadable}): replace them whole through the policy update`,
    );
  }
  const current = policy.policyData;
  const thresholdType = body.thresholdType ?? current.thresholdType;
  if (body.thresholdType !== undefined) pricedIfUsd(ctx, paymaster, thresholdType, "thresholdType");
  const updated: SpendingLimit = {
    type: current.type,
    cycleDuration:
      body.cycleDuration === undefined ? current.cycleDuration : cycleOf(body.cycleDuration, "cycleDuration"),
    thresholdType,
    threshold: wholeForCount(body.threshold ?? current.threshold, thresholdType, "threshold"),
  };
  const saved = await unlessTaken(
    updateLimit(ctx.db, policy.id, {
      name: body.name ?? policy.name,
      policyData: { ...updated },
      cycleStartMs: ctx.now(),
    }),
    nameTaken,
  );
  if (!saved) throw new PolicyNotFoundError();
  ctx.setupChanged(paymaster.apiKey);
}

/**
 * Replaces a rule's settings and/or name; its kind never changes. New settings pass the checks of creation for that
 * kind. A spending limit given new settings starts a new cycle now, as a limit update does (its usage was counted
 * against the old ones); a new name alone keeps the cycle.
 */
export async function updatePolicy(
  ctx: ManagementContext,
  paymaster: Paymaster,
  policyId: string,
  body: UpdatePolicyBody,
  checkUrl: UrlCheck,
): Promise<Policy> {
  if (body.name === undefined && body.policyData === undefined) throw badRequest(UPDATE_POLICY_EMPTY);
  const policy = await policyOf(ctx, paymaster, policyId);
  if (body.policyType !== undefined && body.policyType !== policy.policyType) {
    throw badRequest(policyKindFixed(policy.policyType));
  }
  let policyData: StoredPolicyData[PolicyType] | undefined;
  if (body.policyData !== undefined) {
    assertValid(POLICY_DATA_SCHEMAS[policy.policyType], body.policyData, "policyData");
    const asCreated = { name: policy.name, policyType: policy.policyType, policyData: body.policyData };
    policyData = await policyDataOf(asCreated as CreatePolicyBody, checkUrl, (thresholdType) =>
      pricedIfUsd(ctx, paymaster, thresholdType, "policyData.thresholdType"),
    );
  }
  const restartsCycle = policy.policyType === "PAYMASTER_SA_LIMIT" && policyData !== undefined;
  const saved = await unlessTaken(
    storePolicyUpdate(ctx.db, paymaster.id, policy.id, {
      ...(body.name === undefined ? {} : { name: body.name }),
      ...(policyData === undefined ? {} : { policyData }),
      ...(restartsCycle ? { cycleStartMs: ctx.now() } : {}),
    }),
    nameTaken,
  );
  if (!saved) throw new PolicyNotFoundError();
  ctx.setupChanged(paymaster.apiKey);
  return saved;
}

/** Pauses or resumes a rule. */
export async function setPolicyActive(
  ctx: ManagementContext,
  paymaster: Paymaster,
  policyId: string,
  active: boolean,
): Promise<void> {
  if (!isUuid(policyId) || !(await storePolicyActive(ctx.db, paymaster.id, policyId, active))) {
    throw new PolicyNotFoundError();
  }
  ctx.setupChanged(paymaster.apiKey);
}
