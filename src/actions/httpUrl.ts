import { badRequest } from "../errors";
import type { UrlCheck } from "./managementContext";

/**
 * A URL the service will call, normalised. The schema has checked that it is non-blank text; this checks what JSON
 * Schema cannot: that it parses as a URL, and that its scheme is http or https.
 */
function httpUrl(value: string, field: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw badRequest(`${field} must be a valid URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw badRequest(`${field} must be an http or https URL`);
  return url.toString();
}

/** A URL the service will call, normalised (httpUrl) and let through by the address guard the caller gives. */
export async function callableUrl(value: string, field: string, checkUrl: UrlCheck): Promise<string> {
  const url = httpUrl(value, field);
  await checkUrl(url, field);
  return url;
}
