import { randomUUID } from "node:crypto";
import { STORED_POLICY_DATA, type StoredPolicyData } from "../schemas/management/policies";
import type { PolicyType } from "../schemas/management/policyKinds";
import { problemOf } from "../schemas/validate";
import type { Queryable } from "./database";
import type { PageKey } from "./pageKey";
import { paymasterRows, paymasterRowsPage } from "./paymasterRows";

interface PolicyFields {
  id: string;
  paymasterId: string;
  createdBy: string;
  name: string;
  active: boolean;
  /** Spending limits only: the anchor of the cycles, set on creation and on every limit update. */
  cycleStartMs: number | null;
}

/** A rule of kind `K` whose stored settings read as that kind's (STORED_POLICY_DATA). */
export type PolicyOf<K extends PolicyType> = PolicyFields & {
  policyType: K;
  policyData: StoredPolicyData[K];
  unreadable?: undefined;
};

/** A rule whose settings read as its kind's: narrowing on `policyType` types `policyData`. */
export type ReadablePolicy = { [K in PolicyType]: PolicyOf<K> }[PolicyType];

/**
 * A rule whose stored settings do not read as its kind's (written by hand, or by an older version): kept as stored so
 * that the management API can still show and replace it; the sponsorship refuses while it is active.
 */
export interface UnreadablePolicy extends PolicyFields {
  policyType: PolicyType;
  policyData: unknown;
  /** The first problem, naming the field ("policyData.threshold must be a positive number"). */
  unreadable: string;
}

export type Policy = ReadablePolicy | UnreadablePolicy;

/** What is written for a new rule or an update: settings of the rule's own kind. */
type NewPolicy = Omit<ReadablePolicy, "id" | "active" | "unreadable">;

export const isReadable = (policy: Policy): policy is ReadablePolicy => policy.unreadable === undefined;

/** The rules of one kind among readable ones, typed as that kind. */
export const policiesOfKind = <K extends PolicyType>(
  policies: readonly ReadablePolicy[],
  kind: K,
): Extract<ReadablePolicy, { policyType: K }>[] =>
  policies.filter((policy): policy is Extract<ReadablePolicy, { policyType: K }> => policy.policyType === kind);

interface PolicyRow {
  id: string;
  paymaster_id: string;
  created_by: string;
  name: string;
  policy_type: PolicyType;
  active: boolean;
  policy_data: unknown;
  cycle_start_ms: string | number | null;
}

const COLUMNS = "id, paymaster_id, created_by, name, policy_type, active, policy_data, cycle_start_ms";

/** A rule as stored (its settings still JSON) read as a rule: its settings checked once, against its kind's schema. */
export function readPolicy(stored: PolicyFields & { policyType: PolicyType; policyData: unknown }): Policy {
  const schema = STORED_POLICY_DATA[stored.policyType];
  const unreadable = schema
    ? problemOf(schema, stored.policyData, "policyData", true)
    : `policyType ${String(stored.policyType)} is not a kind of rule this service knows`;
  if (unreadable !== undefined) return { ...stored, unreadable };
  // Checked just above against the schema of this very kind, which TypeScript cannot follow through the lookup.
  return stored as ReadablePolicy;
}

const toPolicy = (row: PolicyRow): Policy =>
  readPolicy({
    id: row.id,
    paymasterId: row.paymaster_id,
    createdBy: row.created_by,
    name: row.name,
    policyType: row.policy_type,
    active: row.active,
    policyData: row.policy_data,
    cycleStartMs: row.cycle_start_ms === null ? null : Number(row.cycle_start_ms),
  });

/** A paymaster's rules have distinct names (a UniqueViolation of this constraint otherwise). */
export const POLICY_NAME_PER_PAYMASTER = "policies_name_per_paymaster";

export async function insertPolicy(db: Queryable, policy: NewPolicy): Promise<Policy> {
  const rows = await db.query<PolicyRow>(
    `INSERT INTO policies (id, paymaster_id, created_by, name, policy_type, policy_data, cycle_start_ms)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${COLUMNS}`,
    [
      randomUUID(),
      policy.paymasterId,
      policy.createdBy,
      policy.name,
      policy.policyType,
      JSON.stringify(policy.policyData),
      policy.cycleStartMs,
    ],
  );
  return toPolicy(rows[0] as PolicyRow);
}

export async function listPolicies(db: Queryable, paymasterId: string): Promise<Policy[]> {
  const rows = await paymasterRows<PolicyRow>(db, "policies", COLUMNS, paymasterId);
  return rows.map(toPolicy);
}

/** Up to `limit` rules after `after` (from the first without it), in the order of listPolicies, each with its key. */
export async function listPoliciesPage(
  db: Queryable,
  paymasterId: string,
  after: PageKey | undefined,
  limit: number,
): Promise<{ policy: Policy; key: PageKey }[]> {
  const rows = await paymasterRowsPage<PolicyRow>(db, "policies", COLUMNS, paymasterId, { after, limit });
  return rows.map(({ row, key }) => ({ policy: toPolicy(row), key }));
}

export async function findPolicy(db: Queryable, paymasterId: string, policyId: string): Promise<Policy | undefined> {
  const rows = await db.query<PolicyRow>(`SELECT ${COLUMNS} FROM policies WHERE paymaster_id = $1 AND id = $2`, [
    paymasterId,
    policyId,
  ]);
  return rows[0] && toPolicy(rows[0]);
}

/** Replaces a spending limit's data and name and restarts its cycle, in one statement. */
export async function updateLimit(
  db: Queryable,
  policyId: string,
  change: { name: string; policyData: StoredPolicyData["PAYMASTER_SA_LIMIT"]; cycleStartMs: number },
): Promise<Policy | undefined> {
  const rows = await db.query<PolicyRow>(
    `UPDATE policies SET name = $2, policy_data = $3, cycle_start_ms = $4 WHERE id = $1 RETURNING ${COLUMNS}`,
    [policyId, change.name, JSON.stringify(change.policyData), change.cycleStartMs],
  );
  return rows[0] && toPolicy(rows[0]);
}

/**
 * Replaces what `change` names of one of the paymaster's rules, in one statement: its data and/or its name, and, when
 * given, its cycle anchor. Undefined when the paymaster has no such rule.
 */
export async function updatePolicy(
  db: Queryable,
  paymasterId: string,
  policyId: string,
  change: { name?: string; policyData?: NewPolicy["policyData"]; cycleStartMs?: number },
): Promise<Policy | undefined> {
  const rows = await db.query<PolicyRow>(
    `UPDATE policies SET name = COALESCE($3, name), policy_data = COALESCE($4::jsonb, policy_data),
       cycle_start_ms = COALESCE($5, cycle_start_ms)
     WHERE paymaster_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
    [
      paymasterId,
      policyId,
      change.name ?? null,
      change.policyData === undefined ? null : JSON.stringify(change.policyData),
      change.cycleStartMs ?? null,
    ],
  );
  return rows[0] && toPolicy(rows[0]);
}

/** Pauses or resumes a rule; the cycle anchor stays where it is. Returns whether the rule exists. */
export async function setPolicyActive(
  db: Queryable,
  paymasterId: string,
  policyId: string,
  active: boolean,
): Promise<boolean> {
  const rows = await db.query("UPDATE policies SET active = $3 WHERE paymaster_id = $1 AND id = $2 RETURNING id", [
    paymasterId,
    policyId,
    active,
  ]);
  return rows.length > 0;
}
