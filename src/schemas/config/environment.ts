import Type, { type Static } from "typebox";
import { Bytes32 } from "../primitives";
import { described } from "./problems";

/**
 * Every environment variable the service reads (docs/configuration.md, 'Environment variables'), as src/config.ts
 * checks them: all optional, an empty value counts as unset, and a whole number is read as a number before the check.
 * What a schema cannot say (DATABASE_URL's scheme, TRUST_PROXY's addresses, one limit against another) src/config.ts
 * checks after it. `writeOnly` marks the secrets (and DATABASE_URL, which may hold a password), whose values a message never repeats.
 */

const wholeNumber = (minimum: number, maximum: number) =>
  Type.Optional(Type.Integer({ minimum, maximum, description: `a whole number from ${minimum} to ${maximum}` }));
const oneOf = <const T extends string[]>(values: readonly [...T]) =>
  Type.Optional(Type.Enum(values, { description: `one of ${values.join(", ")}` }));
const text = (description: string) => Type.Optional(Type.String({ description }));
const privateKey = Type.Optional({ ...described(Bytes32, "0x followed by 64 hex digits"), writeOnly: true });

export const TRUST_PROXY_FORMS =
  "true, false, a number of hops or a comma-separated list of IP addresses and CIDR ranges";

export const EnvironmentSchema = Type.Object({
  PORT: wholeNumber(0, 65535),
  HOST: text("the address to listen on"),
  DATA_DIR: text("a folder"),
  // May hold a password.
  DATABASE_URL: Type.Optional(Type.String({ description: "a postgres:// or postgresql:// URL", writeOnly: true })),
  LOG_LEVEL: oneOf(["fatal", "error", "warn", "info", "debug", "trace", "silent"]),
  CHAINS_FILE: text("the path of the chains file"),
  BODY_LIMIT_BYTES: wholeNumber(1024, 16 * 1024 * 1024),
  HTTP_HEADERS_TIMEOUT_MS: wholeNumber(100, 300_000),
  HTTP_REQUEST_TIMEOUT_MS: wholeNumber(100, 600_000),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: wholeNumber(100, 600_000),
  HTTP_MAX_CONNECTIONS: wholeNumber(1, 1_000_000),
  AUTH_FAILURE_LIMIT: wholeNumber(0, 1_000_000),
  AUTH_FAILURE_WINDOW_SECONDS: wholeNumber(1, 86_400),
  TRUST_PROXY: text(TRUST_PROXY_FORMS),
  SIGNER_PRIVATE_KEY: privateKey,
  SIGNER_KEY_FILE: text("the path of the signer key file"),
  SIGNER_PKCS11_MODULE: text("the path of the PKCS#11 module (a shared library)"),
  SIGNER_PKCS11_TOKEN_LABEL: text("the label of the token that holds the signer key"),
  SIGNER_PKCS11_KEY_LABEL: text("the label of the signer key in the token"),
  SIGNER_PKCS11_PIN_FILE: text("the path of the file holding the token's user PIN"),
  SIGNER_PKCS11_SESSIONS: wholeNumber(1, 256),
  WEBHOOK_TIMEOUT_MS: wholeNumber(100, 30_000),
  WEBHOOK_ALLOW_PRIVATE: oneOf(["true", "false"]),
  WEBHOOK_SIGNING_KEY: privateKey,
  WEBHOOK_SIGNING_KEY_FILE: text("the path of the webhook signing key file"),
  LOCAL_CHAIN: oneOf(["auto", "off"]),
  DASHBOARD: oneOf(["on", "off"]),
  NODE_ENV: text("the kind of deployment (production or another)"),
  // A short token can be guessed; other characters cannot travel in a Bearer header.
  METRICS_TOKEN: Type.Optional(
    Type.String({
      pattern: "^[A-Za-z0-9._~+/=-]{16,256}$",
      description: "16 to 256 characters of A-Z a-z 0-9 . _ ~ + / = -",
      writeOnly: true,
    }),
  ),
  SHUTDOWN_TIMEOUT_MS: wholeNumber(1_000, 120_000),
});

/** The environment after the check: the variables the service reads, whole numbers as numbers, unset ones absent. */
export type Environment = Static<typeof EnvironmentSchema>;

/** The names of the variables the service reads (.env.example and compose.yaml must give each). */
export const ENVIRONMENT_VARIABLES = Object.keys(EnvironmentSchema.properties) as (keyof Environment)[];
