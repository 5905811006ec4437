/**
 * Turns a value a schema refused into one sentence that names the field and the problem: "name is required",
 * "policyData.cycleDuration.unit must be one of hour, day", "whitelistedMethods[1] must be a string". TypeBox decides
 * whether a value is valid; this reads the same schema again only for a refused value, in the order the schema lists
 * its properties, so the first field a client got wrong is the one named.
 *
 * Three annotations let a schema word its own answers (they are `x-` keys: every JSON Schema and OpenAPI reader
 * ignores them):
 * - `x-problem`: what is wrong with a bad value, either one phrase for every check or one per keyword
 *   (`{ minLength: "must not be empty" }`); unlisted checks keep the default wording below.
 * - `x-message`: a whole message, fixed by the interface, for any problem at that field, its absence included.
 * - `x-absent`: `"problem"` when a missing or null value reads as the problem rather than as "is required".
 */

type Node = Record<string, unknown>;
type Path = (string | number)[];

export const PROBLEM = "x-problem";
export const MESSAGE = "x-message";
export const ABSENT = "x-absent";

/**
 * The first problem of `value` against `schema`, or undefined when the walk finds none. `rootLabel` names the value
 * itself ("Request body must be a JSON object"); its fields are named from the root ("name", "policyData.type"). A value
 * that is itself a field passes its name as `path`, so that its own fields are named below it ("cycleDuration.value").
 */
export function firstProblem(schema: object, value: unknown, rootLabel: string, path: Path = []): string | undefined {
  return explain(schema as Node, value, path, rootLabel);
}

function labelOf(path: Path, rootLabel: string): string {
  if (path.length === 0) return rootLabel;
  return path.map((part, index) => (typeof part === "number" ? `[${part}]` : index === 0 ? part : `.${part}`)).join("");
}

const list = (values: unknown[]) => values.map(String).join(", ");

/** The wording of a value of the wrong kind, from what the node expects: its JSON type, or else its choices. */
function kindPhrase(node: Node): string {
  switch (node.type) {
    case "object":
      return "must be a JSON object";
    case "array":
      return "must be an array";
    case "string":
      return "must be a string";
    case "integer":
      return "must be an integer";
    case "number":
      return "must be a number";
    case "boolean":
      return "must be a boolean";
  }
  if (Array.isArray(node.enum)) return `must be one of ${list(node.enum)}`;
  if ("const" in node) return `must be ${String(node.const)}`;
  return "has the wrong type";
}

function say(node: Node, path: Path, rootLabel: string, keyword: string, fallback: string): string {
  if (typeof node[MESSAGE] === "string") return node[MESSAGE];
  const problem = node[PROBLEM];
  const phrase =
    typeof problem === "string"
      ? problem
      : typeof problem === "object" && problem !== null && typeof (problem as Node)[keyword] === "string"
        ? ((problem as Node)[keyword] as string)
        : fallback;
  return `${labelOf(path, rootLabel)} ${phrase}`;
}

function missing(node: Node, path: Path, rootLabel: string): string {
  if (typeof node[MESSAGE] === "string") return node[MESSAGE];
  if (node[ABSENT] === "problem") return say(node, path, rootLabel, "type", kindPhrase(node));
  return `${labelOf(path, rootLabel)} is required`;
}

/** Scalars take null for "not given" (a client that nulls a field has not given it); objects and numbers do not. */
function nullIsMissing(node: Node): boolean {
  if (node[ABSENT] === "problem") return false;
  return node.type === "string" || node.type === "integer" || Array.isArray(node.enum) || "const" in node;
}

function explain(node: Node, value: unknown, path: Path, rootLabel: string): string | undefined {
  if (value === null && nullIsMissing(node)) return missing(node, path, rootLabel);
  if (Array.isArray(node.anyOf)) return explainUnion(node, node.anyOf as Node[], value, path, rootLabel);
  const bad = (keyword: string, fallback: string) => say(node, path, rootLabel, keyword, fallback);
  switch (node.type) {
    case "object":
      if (kindOf(value) !== "object") return bad("type", kindPhrase(node));
      if (typeof node.minProperties === "number" && Object.keys(value as Node).length < node.minProperties) {
        return bad("minProperties", `must have at least ${node.minProperties} properties`);
      }
      return explainObject(node, value as Node, path, rootLabel);
    case "array": {
      if (!Array.isArray(value)) return bad("type", kindPhrase(node));
      if (typeof node.minItems === "number" && value.length < node.minItems) {
        return bad("minItems", `must have at least ${node.minItems} items`);
      }
      if (typeof node.maxItems === "number" && value.length > node.maxItems) {
        return bad("maxItems", `must have at most ${node.maxItems} items`);
      }
      const items = node.items as Node | undefined;
      if (!items) return undefined;
      for (const [index, item] of value.entries()) {
        const problem = explain(items, item, [...path, index], rootLabel);
        if (problem) return problem;
      }
      return undefined;
    }
    case "string":
      if (typeof value !== "string") return bad("type", kindPhrase(node));
      return explainString(node, value, bad);
    case "integer":
    case "number":
      if (typeof value !== "number" || (node.type === "integer" && !Number.isInteger(value))) {
        return bad("type", kindPhrase(node));
      }
      return explainNumber(node, value, bad);
    case "boolean":
      return typeof value === "boolean" ? undefined : bad("type", kindPhrase(node));
  }
  return explainChoice(node, value, bad);
}

/** Properties in the order the schema lists them, then any required one it does not describe. */
function explainObject(node: Node, value: Node, path: Path, rootLabel: string): string | undefined {
  const required = new Set((node.required as string[] | undefined) ?? []);
  const properties = (node.properties as Record<string, Node> | undefined) ?? {};
  for (const [key, child] of Object.entries(properties)) {
    const present = Object.hasOwn(value, key) && value[key] !== undefined;
    if (!present) {
      if (required.has(key)) return missing(child, [...path, key], rootLabel);
      continue;
    }
    const problem = explain(child, value[key], [...path, key], rootLabel);
    if (problem) return problem;
  }
  for (const key of required) {
    if (!Object.hasOwn(properties, key) && !Object.hasOwn(value, key)) {
      return `${labelOf([...path, key], rootLabel)} is required`;
    }
  }
  if (node.additionalProperties === false) {
    const unknown = Object.keys(value).find((key) => !Object.hasOwn(properties, key));
    if (unknown !== undefined) return `${labelOf([...path, unknown], rootLabel)} is not a field it takes`;
  }
  return undefined;
}

type Bad = (keyword: string, fallback: string) => string;

function explainString(node: Node, value: string, bad: Bad): string | undefined {
  if (typeof node.minLength === "number" && value.length < node.minLength) {
    return bad(
      "minLength",
      node.minLength === 1 ? "must not be empty" : `must be at least ${node.minLength} characters`,
    );
  }
  if (typeof node.pattern === "string" && !new RegExp(node.pattern).test(value)) {
    return bad("pattern", `must match ${node.pattern}`);
  }
  if (typeof node.maxLength === "number" && value.length > node.maxLength) {
    return bad("maxLength", `must be at most ${node.maxLength} characters`);
  }
  return explainChoice(node, value, bad);
}

function explainNumber(node: Node, value: number, bad: Bad): string | undefined {
  if (typeof node.exclusiveMinimum === "number" && value <= node.exclusiveMinimum) {
    return bad("exclusiveMinimum", `must be greater than ${node.exclusiveMinimum}`);
  }
  if (typeof node.minimum === "number" && value < node.minimum) {
    return bad("minimum", `must be at least ${node.minimum}`);
  }
  if (typeof node.maximum === "number" && value > node.maximum) {
    return bad("maximum", `must be at most ${node.maximum}`);
  }
  return explainChoice(node, value, bad);
}

function explainChoice(node: Node, value: unknown, bad: Bad): string | undefined {
  if (Array.isArray(node.enum) && !node.enum.includes(value)) return bad("enum", `must be one of ${list(node.enum)}`);
  if ("const" in node && node.const !== value) return bad("const", `must be ${String(node.const)}`);
  return undefined;
}

type Kind = "null" | "object" | "array" | "string" | "number" | "boolean" | "other";

function kindOf(value: unknown): Kind {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  switch (typeof value) {
    case "object":
    case "string":
    case "number":
    case "boolean":
      return typeof value as Kind;
  }
  return "other";
}

const nodeKind = (node: Node): string | undefined => (node.type === "integer" ? "number" : (node.type as string));

/**
 * A choice of shapes. Objects told apart by one property's constant (policyType) are explained against the shape that
 * constant names, or, when it names none, as if that property were an enum of every constant. Other choices are
 * explained against the first shape of the value's own JSON kind (the text or the object form of a cycle).
 */
function explainUnion(node: Node, branches: Node[], value: unknown, path: Path, rootLabel: string): string | undefined {
  const kind = kindOf(value);
  const tag = discriminator(branches);
  if (tag && kind === "object") {
    const given = (value as Node)[tag];
    const chosen = branches.find((branch) => constOf(branch, tag) === given);
    if (chosen) return explain(chosen, value, path, rootLabel);
    const first = branches[0] as Node;
    const { const: _, type: __, ...tagNode }: Node = { ...(first.properties as Record<string, Node>)[tag] };
    tagNode.enum = branches.map((branch) => constOf(branch, tag));
    const merged = { ...first, properties: { ...(first.properties as Record<string, Node>), [tag]: tagNode } };
    return explain(merged, value, path, rootLabel);
  }
  const same = branches.find((branch) => nodeKind(branch) === kind);
  if (same) return explain(same, value, path, rootLabel);
  const kinds = [...new Set(branches.map((branch) => kindPhrase(branch).replace(/^must be /, "")))];
  return say(node, path, rootLabel, "type", `must be ${kinds.join(" or ")}`);
}

function constOf(branch: Node, key: string): unknown {
  return ((branch.properties as Record<string, Node> | undefined)?.[key] as Node | undefined)?.const;
}

/** The property whose constant differs in every branch, if all branches are objects that have one. */
function discriminator(branches: Node[]): string | undefined {
  const first = branches[0];
  if (first?.type !== "object") return undefined;
  for (const key of Object.keys((first.properties as Record<string, Node> | undefined) ?? {})) {
    const values = branches.map((branch) => (branch.type === "object" ? constOf(branch, key) : undefined));
    if (values.every((v) => v !== undefined) && new Set(values).size === branches.length) return key;
  }
  return undefined;
}
