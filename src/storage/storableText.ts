/** A UTF-16 surrogate without its pair: such a string has no UTF-8 form. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Whether PostgreSQL text can hold this string: it cannot hold U+0000, and a lone surrogate has no valid UTF-8 form.
 * A key from a path, header or query that fails this can never have been stored, so a lookup by it finds nothing
 * without asking the database (where it would be an error, not an empty answer).
 */
export const isStorableText = (value: string): boolean => !value.includes("\u0000") && !LONE_SURROGATE.test(value);
