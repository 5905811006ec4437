import type { TSchema } from "typebox";
import {
  INVALID_PARAMS,
  INVALID_REQUEST,
  LIMIT_EXCEEDED,
  METHOD_NOT_FOUND,
  ORIGIN_NOT_ALLOWED,
  PARSE_ERROR,
  RESOURCE_UNAVAILABLE,
  SPONSORSHIP_REFUSED,
  UNKNOWN_PAYMASTER,
} from "../errors";
import type { MethodDescriptor } from "../schemas/rpc/method";
import { pm_getFeeQuoteOrData, pm_getFeeQuotesOrData } from "../schemas/rpc/pm_getFeeQuoteOrData";
import { pm_getPaymasterData } from "../schemas/rpc/pm_getPaymasterData";
import { pm_getPaymasterStubData } from "../schemas/rpc/pm_getPaymasterStubData";
import { pm_sponsorUserOperation } from "../schemas/rpc/pm_sponsorUserOperation";
import { RPC_PATH } from "./server";

/**
 * The OpenRPC document of the sponsorship endpoint (GET /openrpc.json), built from the very schemas the methods read
 * their params with, so that what is published is what is checked. docs/sponsorship-rpc.md, 'Errors' explains the
 * codes at length.
 */
const DOCUMENTED_METHODS: readonly MethodDescriptor[] = [
  pm_sponsorUserOperation,
  pm_getFeeQuoteOrData,
  pm_getFeeQuotesOrData,
  pm_getPaymasterStubData,
  pm_getPaymasterData,
];

/** Every code the endpoint answers with, and what it means to a client. */
const ERRORS: Record<number, string> = {
  [PARSE_ERROR]: "Parse error: the body is not JSON (HTTP 400, id null)",
  [INVALID_REQUEST]: "Invalid request: not a JSON-RPC 2.0 request object, a batch, or a body over the size limit",
  [METHOD_NOT_FOUND]: "Method not found",
  [INVALID_PARAMS]: "Invalid params: the message names the field and the problem (HTTP 400)",
  [UNKNOWN_PAYMASTER]:
    "Unknown paymaster: no paymaster has this apiKey (HTTP 401), or the chain is not supported or not the paymaster's (HTTP 404)",
  [LIMIT_EXCEEDED]:
    "Limit exceeded: too many wrong apiKeys from this address, or a request quota (RATE_LIMIT) of the paymaster used " +
    "up; the message names it; retry after Retry-After (HTTP 429)",
  [ORIGIN_NOT_ALLOWED]:
    "Origin not allowed: the request's Origin is not one the paymaster lists, or it has none and the paymaster " +
    "requires one (HTTP 403)",
  [RESOURCE_UNAVAILABLE]:
    "Resource unavailable: the chain's node or bundler cannot be reached in time (gas, a token price), or the " +
    "instance is shutting down (with Retry-After and Connection: close); a retry may succeed (HTTP 503)",
  [SPONSORSHIP_REFUSED]:
    "Not sponsored: the rules refused the operation, or a USD rule had no usable native token price (none " +
    "configured, stale, not positive, unreadable); the message carries the reason (HTTP 400)",
};

/** The codes any method may answer with, from the envelope, the path and a shutdown under way. */
const COMMON_ERRORS = [
  PARSE_ERROR,
  INVALID_REQUEST,
  METHOD_NOT_FOUND,
  INVALID_PARAMS,
  UNKNOWN_PAYMASTER,
  LIMIT_EXCEEDED,
  ORIGIN_NOT_ALLOWED,
  RESOURCE_UNAVAILABLE,
];

/** The RPC path as an OpenRPC server URL template: `/api/v1/{chainId}/{apiKey}`. */
const SERVER_PATH = RPC_PATH.replace(":chainId", "{chainId}").replace(":apiKey", "{apiKey}");

/**
 * `origin` is where clients reach the service (`https://paymaster.example`): OpenRPC's server URL must be an absolute
 * URI, so the document names the origin it was fetched from.
 */
export function openRpcDocument(origin: string): Record<string, unknown> {
  return {
    openrpc: "1.3.2",
    info: {
      title: "Paymaster sponsorship JSON-RPC",
      version: "1.0.0",
      description:
        "ERC-4337 paymaster for EntryPoint v0.6: SPONSORED mode (the dApp pays, under its rules), ERC20 mode (the " +
        "user pays in a token) and ERC-7677; for EntryPoint v0.7, v0.8 and v0.9, both modes through ERC-7677 and " +
        "pm_sponsorUserOperation [userOp, entryPoint, context] (a `token` in the context selects ERC20 mode) and " +
        "quotes through pm_getFeeQuoteOrData, the EntryPoint picking the version. The path is the only " +
        "authentication. See docs/sponsorship-rpc.md.",
    },
    servers: [
      {
        name: "sponsorship",
        url: `${origin}${SERVER_PATH}`,
        summary: "the RPC endpoint of one paymaster: its chain and its apiKey",
        variables: {
          chainId: { default: "31337", description: "the paymaster's chain, decimal" },
          apiKey: { default: "apiKey", description: "the paymaster's apiKey, from the management API" },
        },
      },
    ],
    methods: DOCUMENTED_METHODS.map((method) => ({
      name: method.name,
      summary: method.summary,
      description: method.description,
      paramStructure: "by-position",
      params: method.params.map((param) => ({
        name: param.name,
        description: param.description,
        required: param.required,
        schema: json(param.schema),
      })),
      result: { name: method.result.name, description: method.result.description, schema: json(method.result.schema) },
      errors: [...new Set([...COMMON_ERRORS, ...method.errors])].map((code) => ({ code, message: ERRORS[code] ?? "" })),
    })),
  };
}

/** The schema as plain JSON: TypeBox's own marks are not enumerable and stay behind. */
const json = (schema: TSchema): unknown => JSON.parse(JSON.stringify(schema));
