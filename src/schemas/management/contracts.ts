import Type, { type Static } from "typebox";
import { messages } from "../../errors";
import { Address } from "../primitives";
import {
  AddressField,
  absentIsProblem,
  BadRequest,
  Name,
  Success,
  Text,
  TooManyRequests,
  tokenAndApiKey,
  Unauthorized,
  withMessage,
} from "./common";
import { PagedSuccess, PageQuery } from "./paging";

/** Endpoints 3, 4, 5 and 7: the contracts a dApp sponsors calls to, and which of their methods. */

/** Function signatures such as "transfer(address,uint256)"; a bad item is named by its index. */
const MethodList = withMessage(
  Type.Array(absentIsProblem(Type.String({ examples: ["transfer(address,uint256)"] })), {
    description: "Function signatures, as `name(type,...)`",
  }),
  messages.whitelistedMethodsMustBeArray,
);

const ContractView = Type.Object({
  name: Type.String(),
  address: Address,
  abi: Type.String({ description: "The ABI as registered (a JSON text)" }),
  whitelistedMethods: Type.Array(Type.String()),
  methods: Type.Array(Type.String(), { description: "Every function of the ABI" }),
});

export const WhitelistContractBody = Type.Object({
  name: Name,
  address: AddressField,
  abi: Text(undefined, {
    description: "The contract's ABI as a JSON text (an array of ABI items)",
    examples: ['[{"type":"function","name":"mint","inputs":[],"outputs":[],"stateMutability":"nonpayable"}]'],
  }),
  whitelistedMethods: Type.Optional(MethodList),
});
export type WhitelistContractBody = Static<typeof WhitelistContractBody>;

export const UpdateMethodsBody = Type.Object({ address: AddressField, whitelistedMethods: MethodList });
export type UpdateMethodsBody = Static<typeof UpdateMethodsBody>;

export const RemoveContractBody = Type.Object({ address: AddressField });
export type RemoveContractBody = Static<typeof RemoveContractBody>;

const unauthorized = Unauthorized(messages.authTokenAndApiKeyRequired);
const common = { tags: ["contracts"], security: tokenAndApiKey };

export const whitelistContractSchema = {
  ...common,
  summary: "Sponsor calls to a contract (all its functions, or the listed ones)",
  body: WhitelistContractBody,
  response: {
    200: Success("Smart contract registered successfully"),
    400: BadRequest(
      messages.contractAddressExists,
      messages.contractNameExists,
      messages.whitelistedMethodsMustBeArray,
      "abi must be a JSON string of an ABI array",
      "whitelistedMethods[1] must be a string",
    ),
    401: unauthorized,
    429: TooManyRequests,
  },
};

export const listContractsSchema = {
  ...common,
  summary: "List the sponsored contracts (all, or a page with ?limit= and ?cursor=)",
  querystring: PageQuery,
  response: {
    200: PagedSuccess("Smart contract list fetched", ContractView),
    400: BadRequest("limit must be a whole number from 1 to 500"),
    401: unauthorized,
    429: TooManyRequests,
  },
};

export const updateMethodsSchema = {
  ...common,
  summary: "Replace the sponsored methods of a contract",
  body: UpdateMethodsBody,
  response: {
    200: Success("Smart contract updated", ContractView),
    400: BadRequest(messages.contractNotFound, messages.whitelistedMethodsMustBeArray, "address is required"),
    401: unauthorized,
    429: TooManyRequests,
  },
};

export const removeContractSchema = {
  ...common,
  summary: "Stop sponsoring calls to a contract",
  body: RemoveContractBody,
  response: {
    200: Success("Smart contract deleted"),
    400: BadRequest(messages.contractNotFound, "address must be an address: 0x followed by 40 hex digits"),
    401: unauthorized,
    429: TooManyRequests,
  },
};
