import type { TSchema } from "typebox";

/**
 * The words a -32602 error uses for a field, kept on the field's schema so that the message and the schema that
 * decides cannot drift apart. They are extra keywords (`x-…`), which JSON Schema validators and OpenRPC readers ignore.
 * - `problem`: what is wrong when the value has the wrong shape (`must be 0x-prefixed hex of whole bytes`);
 * - `missing`: what is said when the field is absent or null (default `is required`);
 * - `showsValue`: the message ends with the value as sent (`, got "sponsored"`), cut to 40 characters.
 */
export interface FieldMessages {
  problem: string;
  missing?: string;
  showsValue?: boolean;
}

export const PROBLEM = "x-problem";
export const MISSING = "x-missing";
export const SHOWS_VALUE = "x-shows-value";

/** A copy of `schema` carrying its messages. The copy keeps TypeBox's own hidden marks, so its static type is intact. */
export function withMessages<Schema extends TSchema>(schema: Schema, messages: FieldMessages): Schema {
  const copy = Object.defineProperties({}, Object.getOwnPropertyDescriptors(schema)) as Schema;
  const annotated = copy as Record<string, unknown>;
  annotated[PROBLEM] = messages.problem;
  if (messages.missing !== undefined) annotated[MISSING] = messages.missing;
  if (messages.showsValue) annotated[SHOWS_VALUE] = true;
  return copy;
}

/** A copy of `schema` with more JSON Schema options (title, description), TypeBox's hidden marks kept. */
export function withOptions<Schema extends TSchema>(schema: Schema, options: Record<string, unknown>): Schema {
  return Object.assign(Object.defineProperties({}, Object.getOwnPropertyDescriptors(schema)), options) as Schema;
}
