import type { FastifyInstance } from "fastify";
import {
  contractsOf,
  contractsPageOf,
  removeContract,
  updateContractMethods,
  whitelistContract,
} from "../actions/contracts";
import { pageRequestOf } from "../actions/pageCursor";
import { ContractNotFoundError } from "../errors";
import {
  listContractsSchema,
  removeContractSchema,
  updateMethodsSchema,
  whitelistContractSchema,
} from "../schemas/management/contracts";
import type { SmartContract } from "../storage/contracts";
import { dappGuard } from "./auth";
import { success } from "./envelope";
import { type Management, typed } from "./management";

const contractView = (contract: SmartContract) => ({
  name: contract.name,
  address: contract.address,
  abi: contract.abi,
  whitelistedMethods: contract.whitelistedMethods,
  methods: contract.methods,
});

/** Endpoints 3, 4, 5 and 7: the contracts a dApp sponsors and which of their methods. */
export function contractRoutes(app: FastifyInstance, { actions, credentials }: Management): void {
  const api = typed(app);
  const dapp = dappGuard(credentials);
  /** The interface answers an update or delete under another dApp's apiKey as if the contract did not exist. */
  const dappOrContractNotFound = dappGuard(credentials, { unknownApiKey: ContractNotFoundError });

  api.post(
    "/smart-contract",
    { schema: whitelistContractSchema, preValidation: dapp.preValidation },
    async (request) => {
      await whitelistContract(actions, dapp.of(request).paymaster, request.body);
      return success("Smart contract registered successfully");
    },
  );

  api.get("/smart-contract", { schema: listContractsSchema, preValidation: dapp.preValidation }, async (request) => {
    const { paymaster } = dapp.of(request);
    const page = pageRequestOf(request.query, ["contract"]);
    if (page) {
      const { items, nextCursor } = await contractsPageOf(actions, paymaster, page);
      return { ...success("Smart contract list fetched", items.map(contractView)), nextCursor };
    }
    const contracts = await contractsOf(actions, paymaster);
    return success("Smart contract list fetched", contracts.map(contractView));
  });

  api.patch(
    "/smart-contract",
    { schema: updateMethodsSchema, preValidation: dappOrContractNotFound.preValidation },
    async (request) => {
      const updated = await updateContractMethods(actions, dappOrContractNotFound.of(request).paymaster, request.body);
      return success("Smart contract updated", contractView(updated));
    },
  );

  api.delete(
    "/smart-contract",
    { schema: removeContractSchema, preValidation: dappOrContractNotFound.preValidation },
    async (request) => {
      await removeContract(actions, dappOrContractNotFound.of(request).paymaster, request.body);
      return success("Smart contract deleted");
    },
  );
}
