import type { FastifyInstance } from "fastify";
import type { AppContext } from "../context";
import { badRequest, messages } from "../errors";
import { checkWhitelistedMethods, parseContractAbi } from "../sponsorship/contractAbi";
import {
  deleteContract,
  findContract,
  insertContract,
  listContracts,
  type SmartContract,
  updateWhitelistedMethods,
} from "../storage/contracts";
import { requireDapp } from "./auth";
import { success } from "./envelope";
import { jsonObject, requiredAddress, requiredString, stringArray } from "./validate";

const contractView = (contract: SmartContract) => ({
  name: contract.name,
  address: contract.address,
  abi: contract.abi,
  whitelistedMethods: contract.whitelistedMethods,
  methods: contract.methods,
});

const dappAuth = { missingMessage: messages.authTokenAndApiKeyRequired };
/** The interface answers an update or delete under another dApp's apiKey as if the contract did not exist. */
const dappAuthOrContractNotFound = { ...dappAuth, unknownApiKey: badRequest(messages.contractNotFound) };

/** Endpoints 3, 4, 5 and 7: the contracts a dApp sponsors and which of their methods. */
export function contractRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.post("/smart-contract", async (request) => {
    const { paymaster } = await requireDapp(ctx.db, request, dappAuth);
    const body = jsonObject(request.body);
    const name = requiredString(body, "name");
    const address = requiredAddress(body, "address");
    const abiText = requiredString(body, "abi", ctx.bodyLimitBytes);
    const abi = parseContractAbi(abiText);
    // Omitted means every function of the ABI is sponsored; an empty array means none.
    const whitelistedMethods =
      body.whitelistedMethods === undefined
        ? abi.methods
        : stringArray(body.whitelistedMethods, "whitelistedMethods", messages.whitelistedMethodsMustBeArray);
    checkWhitelistedMethods(abi, whitelistedMethods);
    await insertContract(ctx.db, {
      paymasterId: paymaster.id,
      name,
      address,
      abi: abiText,
      methods: abi.methods,
      whitelistedMethods,
    });
    return success("Smart contract registered successfully");
  });

  app.get("/smart-contract", async (request) => {
    const { paymaster } = await requireDapp(ctx.db, request, dappAuth);
    const contracts = await listContracts(ctx.db, paymaster.id);
    return success("Smart contract list fetched", contracts.map(contractView));
  });

  app.patch("/smart-contract", async (request) => {
    const { paymaster } = await requireDapp(ctx.db, request, dappAuthOrContractNotFound);
    const body = jsonObject(request.body);
    const address = requiredAddress(body, "address");
    const whitelistedMethods = stringArray(
      body.whitelistedMethods,
      "whitelistedMethods",
      messages.whitelistedMethodsMustBeArray,
    );
    const contract = await findContract(ctx.db, paymaster.id, address);
    if (!contract) throw badRequest(messages.contractNotFound);
    checkWhitelistedMethods(parseContractAbi(contract.abi), whitelistedMethods);
    const updated = await updateWhitelistedMethods(ctx.db, contract.id, whitelistedMethods);
    // Deleted by a concurrent request between the read and the write.
    if (!updated) throw badRequest(messages.contractNotFound);
    return success("Smart contract updated", contractView(updated));
  });

  app.delete("/smart-contract", async (request) => {
    const { paymaster } = await requireDapp(ctx.db, request, dappAuthOrContractNotFound);
    const address = requiredAddress(jsonObject(request.body), "address");
    if (!(await deleteContract(ctx.db, paymaster.id, address))) throw badRequest(messages.contractNotFound);
    return success("Smart contract deleted");
  });
}
