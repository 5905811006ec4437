import Type, { type TSchema } from "typebox";
import { Address } from "../primitives";
import { ABSENT, MESSAGE, PROBLEM } from "../problem";

/**
 * What every management endpoint shares: the text and address fields, the answer envelope and the error answers.
 * The `x-` annotations word the 400 a bad field gets (src/schemas/problem.ts).
 */

/** Gives a schema its own wording for a bad value (one phrase, or one per JSON Schema keyword). */
export const withProblem = <T extends TSchema>(schema: T, problem: string | Record<string, string>): T =>
  ({ ...schema, [PROBLEM]: problem }) as T;

/** Gives a schema a whole fixed message for any problem, its absence included. */
export const withMessage = <T extends TSchema>(schema: T, message: string): T =>
  ({ ...schema, [MESSAGE]: message }) as T;

/** Makes a missing or null value read as the problem rather than "is required". */
export const absentIsProblem = <T extends TSchema>(schema: T): T => ({ ...schema, [ABSENT]: "problem" }) as T;

/** Text that is not blank, at most `maxLength` characters (names are 100). */
export const Text = (maxLength?: number, options: Record<string, unknown> = {}) =>
  withProblem(
    Type.String({ minLength: 1, pattern: "\\S", ...(maxLength === undefined ? {} : { maxLength }), ...options }),
    { minLength: "must not be empty", pattern: "must not be empty" },
  );

/** A name the dApp chooses: a paymaster's, a contract's, a rule's. */
export const Name = Text(100, { examples: ["my dApp"] });

/** An address field; any other value, a number included, gets the same sentence. */
export const AddressField = withProblem(Address, "must be an address: 0x followed by 40 hex digits");

/** An http(s) URL; the service parses it further (a valid URL, http or https) before storing it. */
export const HttpUrl = Text(2048, {
  description: "http or https URL",
  examples: ["https://hooks.example.com/verify"],
});

/** Every answer: `statusCode` (the HTTP status again), `message`, and on some successes `data`. */
export const Success = <T extends TSchema>(message: string, data?: T) =>
  Type.Object({
    statusCode: Type.Literal(200),
    message: Type.Literal(message),
    ...(data === undefined ? {} : { data }),
  });

/** A refusal: the status and a message that names the field and the problem. */
const ErrorAnswer = (status: number, description: string, examples: string[]) =>
  Type.Object(
    {
      statusCode: Type.Literal(status),
      message: Type.String({ examples }),
    },
    { description, examples: examples.map((message) => ({ statusCode: status, message })) },
  );

/** The 400 of an endpoint with input: examples of its messages, the fixed ones and the field sentences alike. */
export const BadRequest = (...examples: string[]) =>
  ErrorAnswer(400, "Bad input: the message names the field and the problem", examples);

export const Unauthorized = (message: string) =>
  ErrorAnswer(401, "The credential headers are missing or not accepted", [message]);

export const NotFound = (...fixed: string[]) => ErrorAnswer(404, "No such record for this dApp", fixed);

export const TooManyRequests = ErrorAnswer(429, "Too many requests with wrong credentials from this address", [
  "Too many requests with wrong credentials from this address: try again in 60 s",
]);

/** The security schemes of the management API: the account's token, and a paymaster's apiKey. */
const AUTH_TOKEN = "authToken";
const API_KEY = "apiKey";
export const securitySchemes = {
  [AUTH_TOKEN]: {
    type: "apiKey",
    in: "header",
    name: "authToken",
    description: "The account's token (created with `npm run account`).",
  },
  [API_KEY]: {
    type: "apiKey",
    in: "header",
    name: "apiKey",
    description: "The apiKey of one of the account's paymasters (returned when it is created).",
  },
} as const;

/** The account's token alone (paymaster list and create, the webhook secret). */
export const tokenOnly = [{ [AUTH_TOKEN]: [] }];
/** Token and apiKey (everything that acts on one paymaster). */
export const tokenAndApiKey = [{ [AUTH_TOKEN]: [], [API_KEY]: [] }];
