import type { FastifyInstance } from "fastify";
import { badRequest } from "../errors";

/**
 * JSON is the only body type. An empty body counts as no body (clients often send the JSON content type on a PATCH
 * that has none), and Fastify's own parser keeps its guard against prototype poisoning.
 */
export function acceptJsonBodies(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser("error", "error");
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("application/json", { parseAs: "string" }, (request, body, done) => {
    if (body === "" || (typeof body === "string" && body.trim() === "")) {
      done(null, undefined);
      return;
    }
    parseJson(request, body as string, (error, value) => {
      // Fastify reports prototype poisoning as invalid JSON; say what is actually refused.
      if (error && isJson(body as string)) {
        done(badRequest("Request body must not contain __proto__ or constructor.prototype keys"), undefined);
        return;
      }
      done(error, value);
    });
  });
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
