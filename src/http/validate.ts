import { badRequest } from "../errors";

/**
 * Field checks for request bodies. Each failure is a 400 whose message names the field and what is wrong with it,
 * so a client can fix its request without reading our code.
 */
export type Body = Record<string, unknown>;

export function jsonObject(body: unknown, what = "Request body"): Body {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw badRequest(`${what} must be a JSON object`);
  }
  return body as Body;
}

export function requiredString(body: Body, field: string, maxLength = 100, label = field): string {
  const value = body[field];
  if (value === undefined || value === null) throw badRequest(`${label} is required`);
  if (typeof value !== "string") throw badRequest(`${label} must be a string`);
  if (value.trim() === "") throw badRequest(`${label} must not be empty`);
  if (value.length > maxLength) throw badRequest(`${label} must be at most ${maxLength} characters`);
  return value;
}

export function optionalString(body: Body, field: string, maxLength = 100): string | undefined {
  return body[field] === undefined ? undefined : requiredString(body, field, maxLength);
}

export function requiredInteger(body: Body, field: string): number {
  const value = body[field];
  if (value === undefined || value === null) throw badRequest(`${field} is required`);
  if (typeof value !== "number" || !Number.isSafeInteger(value)) throw badRequest(`${field} must be an integer`);
  return value;
}

export function oneOf<T extends string>(value: string, allowed: readonly T[], label: string): T {
  if (!(allowed as readonly string[]).includes(value)) {
    throw badRequest(`${label} must be ${allowed.length === 1 ? "" : "one of "}${allowed.join(", ")}`);
  }
  return value as T;
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/** Addresses are compared case-insensitively, so they are kept in lowercase from here on. */
export function requiredAddress(body: Body, field: string): string {
  const value = body[field];
  if (value === undefined || value === null) throw badRequest(`${field} is required`);
  if (typeof value !== "string" || !ADDRESS.test(value)) {
    throw badRequest(`${field} must be an address: 0x followed by 40 hex digits`);
  }
  return value.toLowerCase();
}

export function stringArray(value: unknown, label: string, notArrayMessage = `${label} must be an array`): string[] {
  if (!Array.isArray(value)) throw badRequest(notArrayMessage);
  value.forEach((item, index) => {
    if (typeof item !== "string") throw badRequest(`${label}[${index}] must be a string`);
  });
  return [...new Set(value as string[])];
}

export function requiredHttpUrl(body: Body, field: string): string {
  const value = requiredString(body, field, 2048);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw badRequest(`${field} must be a valid URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw badRequest(`${field} must be an http or https URL`);
  return url.toString();
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ids are UUIDs; anything else cannot name a record, so callers answer 404 without asking the database. */
export const isUuid = (value: unknown): value is string => typeof value === "string" && UUID.test(value);
