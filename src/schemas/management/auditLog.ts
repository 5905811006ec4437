import Type, { type Static } from "typebox";
import { messages } from "../../errors";
import { BadRequest, Success, TooManyRequests, tokenOnly, Unauthorized, withProblem } from "./common";
import { IsoTime } from "./isoTime";
import { PageQuery } from "./paging";

/** The account's audit log: every management write that succeeded, newest first (docs/management-api.md, 'Audit log'). */

const UuidFilter = (description: string) =>
  withProblem(
    Type.String({
      pattern: "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$",
      description,
    }),
    "must be a UUID",
  );

export const AuditLogQuery = Type.Object({
  paymasterId: Type.Optional(UuidFilter("Only the writes to this paymaster")),
  tokenId: Type.Optional(UuidFilter("Only the writes made with this token")),
  from: Type.Optional(IsoTime("Only the writes at or after this time")),
  to: Type.Optional(IsoTime("Only the writes before this time")),
  ...PageQuery.properties,
});
export type AuditLogQuery = Static<typeof AuditLogQuery>;

const Change = Type.Object({
  table: Type.String({ description: "Which kind of record: paymasters, smart_contracts, policies, webhooks, …" }),
  operation: Type.Enum(["insert", "update", "delete"]),
  before: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], {
    description: "The record before (an update: its id and the fields that changed); null for an insert",
  }),
  after: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], {
    description: "The record after; null for a delete. Keys and tokens show as ***, URLs without credentials",
  }),
});

const Entry = Type.Object({
  id: Type.String(),
  time: Type.String({ description: "ISO 8601, the service's clock" }),
  accountId: Type.String(),
  tokenId: Type.Union([Type.String(), Type.Null()]),
  tokenName: Type.Union([Type.String(), Type.Null()]),
  clientAddress: Type.String({ description: "The caller's address (X-Forwarded-For when TRUST_PROXY says so)" }),
  method: Type.String(),
  path: Type.String(),
  paymasterId: Type.Union([Type.String(), Type.Null()]),
  target: Type.Object({}, { additionalProperties: true, description: "The ids the request named" }),
  changes: Type.Array(Change),
});

export const auditLogSchema = {
  tags: ["audit"],
  security: tokenOnly,
  summary: "The account's management writes, newest first (filters: paymaster, token, time)",
  querystring: AuditLogQuery,
  response: {
    200: Type.Object({
      ...Success("Audit log fetched", Type.Array(Entry)).properties,
      nextCursor: Type.Union([Type.String(), Type.Null()], {
        description: "The cursor of the next page, null after the last",
      }),
    }),
    400: BadRequest(
      "from must be an ISO 8601 time with its offset, like 2026-12-31T23:59:59Z",
      "to must be a time that exists: 2030-02 has 28 days",
      "paymasterId must be a UUID",
    ),
    401: Unauthorized(messages.authTokenRequired),
    429: TooManyRequests,
  },
};
