import { randomUUID } from "node:crypto";
import type { Queryable } from "./database";
import type { PageKey } from "./pageKey";
import { paymasterRows, paymasterRowsPage } from "./paymasterRows";

export interface SmartContract {
  id: string;
  paymasterId: string;
  name: string;
  /** Lowercase hex: compared case-insensitively everywhere. */
  address: string;
  abi: string;
  methods: string[];
  whitelistedMethods: string[];
}

interface ContractRow {
  id: string;
  paymaster_id: string;
  name: string;
  address: string;
  abi: string;
  methods: string[];
  whitelisted_methods: string[];
}

const COLUMNS = "id, paymaster_id, name, address, abi, methods, whitelisted_methods";

const toContract = (row: ContractRow): SmartContract => ({
  id: row.id,
  paymasterId: row.paymaster_id,
  name: row.name,
  address: row.address,
  abi: row.abi,
  methods: row.methods,
  whitelistedMethods: row.whitelisted_methods,
});

/** A paymaster's contracts have distinct addresses and distinct names (a UniqueViolation of these otherwise). */
export const CONTRACT_ADDRESS_PER_PAYMASTER = "smart_contracts_address_per_paymaster";
export const CONTRACT_NAME_PER_PAYMASTER = "smart_contracts_name_per_paymaster";

export async function insertContract(db: Queryable, contract: Omit<SmartContract, "id">): Promise<SmartContract> {
  const rows = await db.query<ContractRow>(
    `INSERT INTO smart_contracts (id, paymaster_id, name, address, abi, methods, whitelisted_methods)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${COLUMNS}`,
    [
      randomUUID(),
      contract.paymasterId,
      contract.name,
      contract.address,
      contract.abi,
      JSON.stringify(contract.methods),
      JSON.stringify(contract.whitelistedMethods),
    ],
  );
  return toContract(rows[0] as ContractRow);
}

export async function listContracts(db: Queryable, paymasterId: string): Promise<SmartContract[]> {
  const rows = await paymasterRows<ContractRow>(db, "smart_contracts", COLUMNS, paymasterId);
  return rows.map(toContract);
}

/**
 * Up to `limit` contracts after `after` (from the first without it), in the order of listContracts, each with its key
 * for the next page; the index smart_contracts_by_creation makes this one index range scan whatever the list's size.
 */
export async function listContractsPage(
  db: Queryable,
  paymasterId: string,
  after: PageKey | undefined,
  limit: number,
): Promise<{ contract: SmartContract; key: PageKey }[]> {
  const rows = await paymasterRowsPage<ContractRow>(db, "smart_contracts", COLUMNS, paymasterId, { after, limit });
  return rows.map(({ row, key }) => ({ contract: toContract(row), key }));
}

export async function findContract(
  db: Queryable,
  paymasterId: string,
  address: string,
): Promise<SmartContract | undefined> {
  const rows = await db.query<ContractRow>(
    `SELECT ${COLUMNS} FROM smart_contracts WHERE paymaster_id = $1 AND address = $2`,
    [paymasterId, address],
  );
  return rows[0] && toContract(rows[0]);
}

export async function updateWhitelistedMethods(
  db: Queryable,
  contractId: string,
  whitelistedMethods: string[],
): Promise<SmartContract | undefined> {
  const rows = await db.query<ContractRow>(
    `UPDATE smart_contracts SET whitelisted_methods = $2 WHERE id = $1 RETURNING ${COLUMNS}`,
    [contractId, JSON.stringify(whitelistedMethods)],
  );
  return rows[0] && toContract(rows[0]);
}

/** Returns whether a contract was deleted. */
export async function deleteContract(db: Queryable, paymasterId: string, address: string): Promise<boolean> {
  const rows = await db.query("DELETE FROM smart_contracts WHERE paymaster_id = $1 AND address = $2 RETURNING id", [
    paymasterId,
    address,
  ]);
  return rows.length > 0;
}
