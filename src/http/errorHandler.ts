import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { ApiError, messages } from "../errors";
import { UnstorableText } from "../storage/database";

/** Client mistakes keep their exact message; anything else is logged and hidden behind a plain 500. */
export function errorHandler(bodyLimitBytes: number) {
  return (error: FastifyError | ApiError, request: FastifyRequest, reply: FastifyReply) => {
    if (error instanceof ApiError) {
      return reply.status(error.statusCode).send({ statusCode: error.statusCode, message: error.message });
    }
    // A route may take more than the service's general limit (a rule's creation: a sender list).
    const clientMessage = clientErrorMessage(error, request.routeOptions.bodyLimit ?? bodyLimitBytes);
    if (clientMessage) return reply.status(400).send({ statusCode: 400, message: clientMessage });
    request.log.error({ err: error }, "request failed");
    return reply.status(500).send({ statusCode: 500, message: messages.internal });
  };
}

/** Fastify's own 4xx errors, reworded to name the problem in the interface's envelope. */
function clientErrorMessage(error: FastifyError, bodyLimitBytes: number): string | undefined {
  switch (error.code) {
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return `Request body is larger than the limit of ${bodyLimitBytes} bytes`;
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return "Content-Type must be application/json";
    case "FST_ERR_CTP_INVALID_JSON_BODY":
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return "Request body is not valid JSON";
    case "FST_ERR_CTP_INVALID_CONTENT_LENGTH":
      return "Content-Length does not match the request body";
  }
  // PostgreSQL text and jsonb cannot hold U+0000 (storage names the refusal), so such a string can never be stored.
  if (error instanceof UnstorableText) return "Text in the request body must not contain the NUL character (\\u0000)";
  if (error instanceof SyntaxError) return "Request body is not valid JSON";
  if (typeof error.statusCode === "number" && error.statusCode >= 400 && error.statusCode < 500) {
    return error.message;
  }
  return undefined;
}
