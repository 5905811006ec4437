import { badRequest, ContractAddressExistsError, ContractNameExistsError, ContractNotFoundError } from "../errors";
import type { RemoveContractBody, UpdateMethodsBody, WhitelistContractBody } from "../schemas/management/contracts";
import { checkWhitelistedMethods, InvalidAbiError, parseContractAbi } from "../sponsorship/contractAbi";
import { AnalyzeOnGrowth } from "../storage/analyzeOnGrowth";
import {
  CONTRACT_ADDRESS_PER_PAYMASTER,
  CONTRACT_NAME_PER_PAYMASTER,
  deleteContract,
  findContract,
  insertContract,
  listContracts,
  listContractsPage,
  type SmartContract,
  updateWhitelistedMethods,
} from "../storage/contracts";
import type { Database } from "../storage/database";
import type { Paymaster } from "../storage/paymasters";
import { type ManagementContext, unlessTaken } from "./managementContext";
import { type Page, type PageRequest, pageOf } from "./pageCursor";

/** Addresses are compared case-insensitively, so they are kept in lowercase. */
const lower = (address: string) => address.toLowerCase();

export const contractsOf = (ctx: ManagementContext, paymaster: Paymaster): Promise<SmartContract[]> =>
  listContracts(ctx.db, paymaster.id);

/** One page of a paymaster's contracts, in the order of the whole list. */
export async function contractsPageOf(
  ctx: ManagementContext,
  paymaster: Paymaster,
  request: PageRequest,
): Promise<Page<SmartContract>> {
  const rows = await listContractsPage(ctx.db, paymaster.id, request.after?.key, request.limit + 1);
  return pageOf(
    rows.map(({ contract, key }) => ({ item: contract, cursor: { part: "contract", key } })),
    request.limit,
  );
}

/** Sponsors calls to a contract: every function of its ABI when no methods are listed, none for an empty list. */
export async function whitelistContract(
  ctx: ManagementContext,
  paymaster: Paymaster,
  body: WhitelistContractBody,
): Promise<SmartContract> {
  const abi = asBadRequest(() => parseContractAbi(body.abi));
  const whitelistedMethods =
    body.whitelistedMethods === undefined ? abi.methods : [...new Set(body.whitelistedMethods)];
  asBadRequest(() => checkWhitelistedMethods(abi, whitelistedMethods));
  const contract = await unlessTaken(
    insertContract(ctx.db, {
      paymasterId: paymaster.id,
      name: body.name,
      address: lower(body.address),
      abi: body.abi,
      methods: abi.methods,
      whitelistedMethods,
    }),
    {
      [CONTRACT_ADDRESS_PER_PAYMASTER]: () => new ContractAddressExistsError(),
      [CONTRACT_NAME_PER_PAYMASTER]: () => new ContractNameExistsError(),
    },
  );
  ctx.setupChanged(paymaster.apiKey);
  contractStatisticsOf(ctx.background ?? ctx.db).wrote(1);
  return contract;
}

/** One per database: the embedded one learns the contracts table's size as it grows (PostgreSQL: autovacuum). */
const contractStatistics = new WeakMap<Database, AnalyzeOnGrowth>();

function contractStatisticsOf(db: Database): AnalyzeOnGrowth {
  let statistics = contractStatistics.get(db);
  if (!statistics) {
    statistics = new AnalyzeOnGrowth(db, "smart_contracts");
    contractStatistics.set(db, statistics);
  }
  return statistics;
}

/** Replaces which methods of a registered contract are sponsored. */
export async function updateContractMethods(
  ctx: ManagementContext,
  paymaster: Paymaster,
  body: UpdateMethodsBody,
): Promise<SmartContract> {
  const whitelistedMethods = [...new Set(body.whitelistedMethods)];
  const contract = await findContract(ctx.db, paymaster.id, lower(body.address));
  if (!contract) throw new ContractNotFoundError();
  asBadRequest(() => checkWhitelistedMethods(parseContractAbi(contract.abi), whitelistedMethods));
  const updated = await updateWhitelistedMethods(ctx.db, contract.id, whitelistedMethods);
  // Deleted by a concurrent request between the read and the write.
  if (!updated) throw new ContractNotFoundError();
  ctx.setupChanged(paymaster.apiKey);
  return updated;
}

export async function removeContract(ctx: ManagementContext, paymaster: Paymaster, body: RemoveContractBody) {
  if (!(await deleteContract(ctx.db, paymaster.id, lower(body.address)))) throw new ContractNotFoundError();
  ctx.setupChanged(paymaster.apiKey);
}

/** The ABI parser's refusal is the client's 400, in its words. */
function asBadRequest<T>(check: () => T): T {
  try {
    return check();
  } catch (error) {
    if (error instanceof InvalidAbiError) throw badRequest(error.message);
    throw error;
  }
}
