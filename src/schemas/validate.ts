import type { TSchema } from "typebox";
import { Compile } from "typebox/compile";
import { badRequest } from "../errors";
import { firstProblem } from "./problem";

type Validator = ReturnType<typeof Compile<TSchema>>;
const compiled = new WeakMap<TSchema, Validator>();

function validatorOf(schema: TSchema): Validator {
  let validator = compiled.get(schema);
  if (!validator) {
    validator = Compile(schema);
    compiled.set(schema, validator);
  }
  return validator;
}

/**
 * Checks a value with TypeBox's compiled validator; a refused value is a 400 whose message names the first field that
 * is wrong and what is wrong with it (`label` names the value itself: "Request body", "cycleDuration").
 */
export function problemOf(schema: TSchema, value: unknown, label: string, isField = false): string | undefined {
  if (validatorOf(schema).Check(value)) return undefined;
  const problem = firstProblem(schema, value, label, isField ? [label] : []);
  if (problem) return problem;
  // The walk and TypeBox disagree only on keywords the walk does not know; still name the place.
  const [first] = validatorOf(schema).Errors(value);
  return `${label}${first?.instancePath ?? ""} ${first?.message ?? "is not valid"}`;
}

/** Checks one field's value (named `label`) after the request's own validation, e.g. a text read into an object. */
export function assertValid<T extends TSchema>(schema: T, value: unknown, label: string): void {
  const problem = problemOf(schema, value, label, true);
  if (problem) throw badRequest(problem);
}
