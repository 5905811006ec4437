import type { FastifyInstance } from "fastify";
import { type AppContext, nowMs } from "../context";
import { badRequest, messages, notFound } from "../errors";
import {
  CYCLE_UNITS,
  type CycleDuration,
  currentCycleStartMs,
  cycleLengthMs,
  LIMIT_SCOPES,
  parseCycleDurationText,
  type SpendingLimit,
  THRESHOLD_TYPES,
} from "../sponsorship/spendingLimit";
import type { Account } from "../storage/accounts";
import { listContracts, type SmartContract } from "../storage/contracts";
import type { Paymaster } from "../storage/paymasters";
import {
  findPolicy,
  insertPolicy,
  listPolicies,
  POLICY_TYPES,
  type Policy,
  setPolicyActive,
  updateLimit,
} from "../storage/policies";
import { requireDapp } from "./auth";
import { success } from "./envelope";
import { type Body, isUuid, jsonObject, oneOf, optionalString, requiredHttpUrl, requiredString } from "./validate";
import { requireCallableUrl } from "./webhookUrl";

const dappAuth = { missingMessage: messages.authTokenAndApiKeyRequired };
/** Cycles longer than this are surely a mistake, and would overflow the millisecond arithmetic long before. */
const MAX_CYCLE_VALUE = 100_000;
/** In ether for NATIVE_ASSET; far above any real budget, low enough to stay exact as a JSON number. */
const MAX_THRESHOLD = 1e15;

function cycleDuration(value: unknown, label: string): CycleDuration {
  if (typeof value === "string") {
    const parsed = parseCycleDurationText(value);
    if (!parsed) throw badRequest(`${label} must be an object {value, unit} or a text like "3 hour" or "1 day"`);
    value = parsed;
  }
  const cycle = jsonObject(value, label);
  const amount = cycle.value;
  if (typeof amount !== "number" || !Number.isSafeInteger(amount) || amount < 1 || amount > MAX_CYCLE_VALUE) {
    throw badRequest(`${label}.value must be a whole number from 1 to ${MAX_CYCLE_VALUE}`);
  }
  if (typeof cycle.unit !== "string") throw badRequest(`${label}.unit must be one of ${CYCLE_UNITS.join(", ")}`);
  return { value: amount, unit: oneOf(cycle.unit, CYCLE_UNITS, `${label}.unit`) };
}

function threshold(value: unknown, thresholdType: SpendingLimit["thresholdType"], label: string): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
    throw badRequest(`${label} must be a positive number`);
  }
  if (value > MAX_THRESHOLD) throw badRequest(`${label} must be at most ${MAX_THRESHOLD}`);
  if (thresholdType === "COUNT" && !Number.isInteger(value)) {
    throw badRequest(`${label} must be a whole number of user operations when thresholdType is COUNT`);
  }
  return value;
}

function requiredEnum<T extends string>(body: Body, field: string, allowed: readonly T[], label: string): T {
  const value = body[field];
  if (value === undefined || value === null) throw badRequest(`${label} is required`);
  if (typeof value !== "string") throw badRequest(`${label} must be one of ${allowed.join(", ")}`);
  return oneOf(value, allowed, label);
}

function spendingLimit(data: Body): SpendingLimit {
  const type = requiredEnum(data, "type", LIMIT_SCOPES, "policyData.type");
  if (data.cycleDuration === undefined) throw badRequest("policyData.cycleDuration is required");
  const cycle = cycleDuration(data.cycleDuration, "policyData.cycleDuration");
  const thresholdType = requiredEnum(data, "thresholdType", THRESHOLD_TYPES, "policyData.thresholdType");
  if (data.threshold === undefined) throw badRequest("policyData.threshold is required");
  return {
    type,
    cycleDuration: cycle,
    threshold: threshold(data.threshold, thresholdType, "policyData.threshold"),
    thresholdType,
  };
}

/** The stored data of a new rule; the message of every refusal names the field. */
function policyData(policyType: Policy["policyType"], data: Body): Record<string, unknown> {
  switch (policyType) {
    case "PAYMASTER_SA_LIMIT":
      return { ...spendingLimit(data) };
    case "WEBHOOK":
      return { url: requiredHttpUrl(data, "url") };
    case "WALLET_DEPLOYMENT":
      return { operator: "walletDeployment" };
  }
}

function policyView(policy: Policy, paymaster: Paymaster, account: Account, nowMs: number) {
  let data = policy.policyData;
  if (policy.policyType === "PAYMASTER_SA_LIMIT" && policy.cycleStartMs !== null) {
    const limit = policy.policyData as unknown as SpendingLimit;
    data = {
      ...data,
      startTimeInEpoch: currentCycleStartMs(policy.cycleStartMs, limit.cycleDuration, nowMs),
      durationInMs: cycleLengthMs(limit.cycleDuration),
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

/** Endpoints 8 to 14: the rules of a paymaster. */
export function policyRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.post("/paymaster-policy", async (request) => {
    const { account, paymaster } = await requireDapp(ctx.db, request, dappAuth);
    const body = jsonObject(request.body);
    const name = requiredString(body, "name");
    const policyType = requiredEnum(body, "policyType", POLICY_TYPES, "policyType");
    if (body.policyData === undefined) throw badRequest("policyData is required");
    const data = policyData(policyType, jsonObject(body.policyData, "policyData"));
    if (policyType === "WEBHOOK") await requireCallableUrl(app, ctx, data.url as string, "policyData.url");
    const now = nowMs(ctx);
    const policy = await insertPolicy(ctx.db, {
      paymasterId: paymaster.id,
      createdBy: account.id,
      name,
      policyType,
      policyData: data,
      cycleStartMs: policyType === "PAYMASTER_SA_LIMIT" ? now : null,
    });
    return success("Paymaster Policy created successfully", policyView(policy, paymaster, account, now));
  });

  app.get("/paymaster-policy", async (request) => {
    const { account, paymaster } = await requireDapp(ctx.db, request, dappAuth);
    const [policies, contracts] = await Promise.all([
      listPolicies(ctx.db, paymaster.id),
      listContracts(ctx.db, paymaster.id),
    ]);
    const now = nowMs(ctx);
    return success("Paymaster Policies found!", [
      ...policies.map((policy) => policyView(policy, paymaster, account, now)),
      ...contracts.map((contract) => whitelistedContractView(contract, paymaster, account)),
    ]);
  });

  app.patch<{ Params: { policyId: string } }>("/paymaster-policy/limit/:policyId", async (request) => {
    const { paymaster } = await requireDapp(ctx.db, request, dappAuth);
    const policy = await policyOf(ctx, paymaster, request.params.policyId);
    if (policy.policyType !== "PAYMASTER_SA_LIMIT") {
      throw badRequest(`Policy ${policy.id} is a ${policy.policyType} policy; only PAYMASTER_SA_LIMIT has a limit`);
    }
    // A PATCH without a body only restarts the cycle.
    const body = request.body === undefined ? {} : jsonObject(request.body);
    const current = policy.policyData as unknown as SpendingLimit;
    const thresholdType =
      body.thresholdType === undefined
        ? current.thresholdType
        : requiredEnum(body, "thresholdType", THRESHOLD_TYPES, "thresholdType");
    const updated: SpendingLimit = {
      type: current.type,
      cycleDuration:
        body.cycleDuration === undefined ? current.cycleDuration : cycleDuration(body.cycleDuration, "cycleDuration"),
      thresholdType,
      threshold: threshold(body.threshold ?? current.threshold, thresholdType, "threshold"),
    };
    const name = optionalString(body, "name") ?? policy.name;
    const saved = await updateLimit(ctx.db, policy.id, { name, policyData: { ...updated }, cycleStartMs: nowMs(ctx) });
    if (!saved) throw notFound(messages.policyNotFound);
    return success("Paymaster Limit updated");
  });

  for (const [action, active, message] of [
    ["deactivate", false, "Paymaster Policy Deactivated!"],
    ["activate", true, "Paymaster Policy Activated!"],
  ] as const) {
    app.patch<{ Params: { policyId: string } }>(`/paymaster-policy/${action}/:policyId`, async (request) => {
      const { paymaster } = await requireDapp(ctx.db, request, dappAuth);
      const { policyId } = request.params;
      if (!isUuid(policyId) || !(await setPolicyActive(ctx.db, paymaster.id, policyId, active))) {
        throw notFound(messages.policyNotFound);
      }
      return success(message);
    });
  }
}

async function policyOf(ctx: AppContext, paymaster: Paymaster, policyId: string): Promise<Policy> {
  const policy = isUuid(policyId) ? await findPolicy(ctx.db, paymaster.id, policyId) : undefined;
  if (!policy) throw notFound(messages.policyNotFound);
  return policy;
}
