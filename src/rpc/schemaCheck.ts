import type { TSchema } from "typebox";
import { Compile } from "typebox/compile";
import type { TValidationError } from "typebox/error";
import { invalidParams } from "../errors";
import { MISSING, PROBLEM, SHOWS_VALUE } from "../schemas/rpc/messages";

/**
 * A compiled TypeBox validator for one position of a method's params, whose failure is a -32602 error naming the first
 * problem the way a client reads it: `params[1].sponsorshipInfo.webhookData must be an object`. The schema's
 * `x-problem`/`x-missing` words (src/schemas/rpc/messages.ts) make the message; "first" is in the order the schema
 * lists its members, so a request with several problems always gets the same one named.
 */
export interface SchemaCheck<Value> {
  /** The value, typed, or a -32602 error. */
  read(value: unknown, label: string): Value;
  /** The JIT-compiled check alone, for the hot path's own decisions. */
  check(value: unknown): value is Value;
}

export function schemaCheck<Schema extends TSchema, Value = unknown>(schema: Schema): SchemaCheck<Value> {
  const validator = Compile(schema);
  return {
    check: (value): value is Value => validator.Check(value),
    read(value, label) {
      if (validator.Check(value)) return value as Value;
      throw invalidParams(describeFirstError(schema, validator.Errors(value), value, label));
    },
  };
}

interface Located {
  schemaPath: string[];
  instancePath: string[];
  /** The member the error says is missing, if it is a `required` error. */
  missing: boolean;
}

/** The message for the first error, in the schema's member order. Exported for the tests of every message form. */
function describeFirstError(
  schema: TSchema,
  errors: readonly TValidationError[],
  value: unknown,
  label: string,
): string {
  const located: Located[] = errors.flatMap((error): Located[] => {
    const schemaPath = segments(error.schemaPath);
    const instancePath = segments(error.instancePath);
    if (error.keyword === "required") {
      const names = (error.params as { requiredProperties: string[] }).requiredProperties;
      return names.map((name) => ({
        schemaPath: [...schemaPath, "properties", name],
        instancePath: [...instancePath, name],
        missing: true,
      }));
    }
    return [{ schemaPath, instancePath, missing: false }];
  });
  if (located.length === 0) return `${label} is invalid`;
  const first = located
    .map((entry) => ({ entry, key: orderKey(schema, entry.schemaPath) }))
    .sort((a, b) => compareKeys(a.key, b.key))[0]?.entry as Located;
  return message(schema, first, value, label);
}

function message(schema: TSchema, error: Located, root: unknown, label: string): string {
  const { problem, missing, showsValue } = wordsAt(schema, error.schemaPath, error.instancePath.length);
  const { value, name } = valueAt(root, error.instancePath, label);
  const absent = error.missing || value === undefined || (value === null && error.instancePath.length > 0);
  if (absent && (error.missing || error.instancePath.length > 0 || missing !== undefined)) {
    return `${name} ${missing ?? "is required"}`;
  }
  const text = problem ?? "is invalid";
  return showsValue ? `${name} ${text}, got ${JSON.stringify(value)?.slice(0, 40)}` : `${name} ${text}`;
}

/** The words of the deepest schema on the path that describes the value itself (not one of its members). */
function wordsAt(schema: TSchema, path: string[], depth: number) {
  let node: Record<string, unknown> | undefined = schema as Record<string, unknown>;
  let nodeDepth = 0;
  let words = depth === 0 ? pick(node) : {};
  for (let i = 0; i < path.length && node; i++) {
    const step = path[i] as string;
    if (step === "properties" || step === "anyOf" || step === "oneOf" || step === "allOf" || step === "prefixItems") {
      const children = node[step] as Record<string, unknown> | undefined;
      node = children?.[path[++i] as string] as Record<string, unknown> | undefined;
      if (step === "properties" || step === "prefixItems") nodeDepth++;
    } else if (step === "items" || step === "additionalProperties") {
      node = node[step] as Record<string, unknown> | undefined;
      nodeDepth++;
    } else {
      // A keyword (pattern, minimum, ...): the schema holding it is the one described.
      break;
    }
    if (node && nodeDepth === depth) {
      const found = pick(node);
      words = {
        problem: found.problem ?? words.problem,
        missing: found.missing ?? words.missing,
        showsValue: found.showsValue ?? words.showsValue,
      };
    }
  }
  return words;
}

function pick(node: Record<string, unknown>): { problem?: string; missing?: string; showsValue?: boolean } {
  return {
    problem: node[PROBLEM] as string | undefined,
    missing: node[MISSING] as string | undefined,
    showsValue: node[SHOWS_VALUE] as boolean | undefined,
  };
}

/** The value at an instance path and its name as the client wrote it: `params[1].tokenInfo.tokenList[2]`. */
function valueAt(root: unknown, path: string[], label: string): { value: unknown; name: string } {
  let value = root;
  let name = label;
  for (const step of path) {
    if (Array.isArray(value)) {
      name += `[${step}]`;
      value = value[Number(step)];
    } else {
      name += `.${step}`;
      value = value !== null && typeof value === "object" ? (value as Record<string, unknown>)[step] : undefined;
    }
  }
  return { value, name };
}

/** Positions along a schema path: a member's place among its object's members, a branch's or an item's index. */
function orderKey(schema: TSchema, path: string[]): number[] {
  const key: number[] = [];
  let node: Record<string, unknown> | undefined = schema as Record<string, unknown>;
  for (let i = 0; i < path.length && node; i++) {
    const step = path[i] as string;
    const children = node[step] as Record<string, unknown> | undefined;
    if (step === "properties") {
      const name = path[++i] as string;
      key.push(Object.keys(children ?? {}).indexOf(name));
      node = children?.[name] as Record<string, unknown> | undefined;
    } else if (step === "anyOf" || step === "oneOf" || step === "allOf" || step === "prefixItems") {
      const index = path[++i] as string;
      key.push(Number(index));
      node = children?.[index] as Record<string, unknown> | undefined;
    } else if (step === "items" || step === "additionalProperties") {
      node = children;
    } else {
      break;
    }
  }
  return key;
}

function compareKeys(a: number[], b: number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const difference = (a[i] as number) - (b[i] as number);
    if (difference !== 0) return difference;
  }
  // One path within the other: the deeper error is the specific one (a union's own error only sums up its branches').
  return b.length - a.length;
}

/** `#/properties/a/anyOf/0` and `/a/0` as their segments, JSON Pointer escapes undone. */
function segments(pointer: string): string[] {
  return pointer
    .replace(/^#/, "")
    .split("/")
    .slice(1)
    .map((segment) => segment.replace(/~1/g, "/").replace(/~0/g, "~"));
}
