import Type, { type TSchema } from "typebox";
import { Success, withProblem } from "./common";

export const DEFAULT_PAGE_SIZE = 100;
const MAX_PAGE_SIZE = 500;

/**
 * The optional paging of a list (docs/management-api.md, 'Pages'). A query string's values are texts, so `limit` is
 * checked as the text of a whole number from 1 to MAX_PAGE_SIZE (500).
 */
export const PageQuery = Type.Object({
  limit: Type.Optional(
    withProblem(
      Type.String({
        pattern: "^(?:[1-9]\\d?|[1-4]\\d\\d|500)$",
        description: `Rows per page, 1 to ${MAX_PAGE_SIZE}; asks for pages (100 when only \`cursor\` is given)`,
        examples: ["100"],
      }),
      `must be a whole number from 1 to ${MAX_PAGE_SIZE}`,
    ),
  ),
  cursor: Type.Optional(
    withProblem(
      Type.String({
        pattern: "^[A-Za-z0-9_-]{1,200}$",
        description: "The `nextCursor` of the previous page; leave it out for the first page",
      }),
      "must be the nextCursor of a previous page of this list",
    ),
  ),
});

/**
 * The list's answer: without `limit` and `cursor` the whole list in `data`, as the interface fixes it; with either, one
 * page in `data` and `nextCursor` beside it, null after the last page.
 */
export const PagedSuccess = <T extends TSchema>(message: string, item: T) =>
  Type.Object({
    ...Success(message, Type.Array(item)).properties,
    nextCursor: Type.Optional(
      Type.Union([Type.String(), Type.Null()], {
        description: "Only when paging: the cursor of the next page, null after the last",
      }),
    ),
  });
