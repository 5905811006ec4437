import type { TSchema } from "typebox";
import { Settings } from "typebox/system";
import { Value } from "typebox/value";

/**
 * One thing wrong with a configuration value, found by its schema: where it is (the keys and indexes from the root of
 * the value) and what is wrong, written as the rest of a sentence whose subject is that place ("must be a positive
 * integer", "has unknown field rpcURL (known: …)"). The schemas' `description`s say what a field must be, so the
 * messages read the same as the documentation.
 */
export interface SchemaProblem {
  path: string[];
  predicate: string;
}

interface SchemaNode {
  description?: string;
  properties?: Record<string, SchemaNode>;
  [keyword: string]: unknown;
}

/** A copy of a shared schema that describes itself for one use (e.g. an address that must also be non-zero). */
export function described<T extends TSchema>(schema: T, description: string): T {
  return { ...schema, description };
}

/**
 * TypeBox stops collecting at `maxErrors` (8 by default, a guard for request bodies from anyone). A configuration is
 * the operator's own, read once at start, and every problem in it is worth telling at once.
 */
const CONFIGURATION_MAX_ERRORS = 1000;

/** Every problem the schema finds in the value, not only the first, each once. */
export function schemaProblems(schema: TSchema, value: unknown): SchemaProblem[] {
  const usual = Settings.Get().maxErrors;
  Settings.Set({ maxErrors: CONFIGURATION_MAX_ERRORS });
  let errors: ReturnType<typeof Value.Errors>;
  try {
    errors = Value.Errors(schema, value);
  } finally {
    // Set back at once (this runs synchronously): the request-body schemas keep their own guard.
    Settings.Set({ maxErrors: usual });
  }
  // A union's description says what it accepts; its branches' own failures would only repeat that, worse.
  const unions = errors.filter((error) => error.keyword === "anyOf").map((error) => `${error.schemaPath}/anyOf/`);
  const problems: SchemaProblem[] = [];
  for (const error of errors) {
    if (unions.some((prefix) => error.schemaPath.startsWith(prefix))) continue;
    // additionalProperties failures come twice: once per unknown key (keyword "boolean") and once listing them all.
    if (error.keyword === "boolean" && error.schemaPath.endsWith("/additionalProperties")) continue;
    const node = resolve(schema as SchemaNode, error.schemaPath);
    const path = pointerSegments(error.instancePath);
    if (error.keyword === "required") {
      for (const name of error.params.requiredProperties) {
        const property = node?.properties?.[name];
        const predicate = property?.description ? `must be ${property.description} (missing)` : "is missing";
        problems.push({ path: [...path, name], predicate });
      }
    } else if (error.keyword === "additionalProperties") {
      const known = Object.keys(node?.properties ?? {}).join(", ");
      for (const name of error.params.additionalProperties) {
        problems.push({ path, predicate: `has unknown field ${name} (known: ${known})` });
      }
    } else {
      problems.push({ path, predicate: expectation(node, error.message) });
    }
  }
  return problems;
}

/** Whether the schema marks the value as one never to echo (a key, a token): JSON Schema's `writeOnly`. */
export function isSecret(schema: TSchema | undefined): boolean {
  return (schema as SchemaNode | undefined)?.writeOnly === true;
}

function expectation(node: SchemaNode | undefined, fallback: string): string {
  return node?.description ? `must be ${node.description}` : fallback;
}

/** The schema a JSON pointer such as `#/items/properties/chainId` names inside the root schema. */
function resolve(root: SchemaNode, schemaPath: string): SchemaNode | undefined {
  let node: unknown = root;
  for (const segment of pointerSegments(schemaPath.replace(/^#/, ""))) {
    if (typeof node !== "object" || node === null) return undefined;
    node = (node as Record<string, unknown>)[segment];
  }
  return typeof node === "object" && node !== null ? (node as SchemaNode) : undefined;
}

function pointerSegments(pointer: string): string[] {
  if (pointer === "") return [];
  return pointer
    .slice(1)
    .split("/")
    .map((segment) => segment.replaceAll("~1", "/").replaceAll("~0", "~"));
}

/**
 * The problem as one line naming its place: `place` is the file (or whatever holds the value); an element of the
 * top-level array is `<itemName> N`, one of a nested array `field[N]`, labelled with its address when it has one and
 * the problem is not that address; then the field, e.g. `chains file x.json, entry 0, tokens[1] (0x…): symbol must be …`.
 */
export function problemAt(root: unknown, problem: SchemaProblem, place: string, itemName: string): string {
  let where = place;
  let field: string[] = [];
  let value = root;
  problem.path.forEach((segment, index) => {
    const container = value;
    value =
      typeof container === "object" && container !== null ? (container as Record<string, unknown>)[segment] : undefined;
    if (!Array.isArray(container)) {
      field.push(segment);
      return;
    }
    where += index === 0 ? `, ${itemName} ${segment}` : `, ${fieldName(field)}[${segment}]`;
    field = [];
    const rest = problem.path.slice(index + 1);
    const address = (value as { address?: unknown } | undefined)?.address;
    if (typeof address === "string" && !(rest.length === 1 && rest[0] === "address")) where += ` (${address})`;
  });
  return field.length > 0 ? `${where}: ${fieldName(field)} ${problem.predicate}` : `${where} ${problem.predicate}`;
}

/** `price.fixedRate`, `entryPoints["0.7"].tokenPaymaster`. */
function fieldName(keys: string[]): string {
  return keys
    .map((key, index) => (/^[A-Za-z_]\w*$/.test(key) ? (index === 0 ? key : `.${key}`) : `["${key}"]`))
    .join("");
}
