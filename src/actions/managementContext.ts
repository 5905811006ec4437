import type { ChainConfig } from "../config";
import type { Database } from "../storage/database";
import { UniqueViolation } from "../storage/database";

/** What the management use cases need: storage, the chains served, the clock, and the sponsorship setup cache. */
export interface ManagementContext {
  /** Inside a write, the write's transaction (src/storage/ambientTransaction.ts): the change commits with its audit entry. */
  db: Database;
  /** The database outside any write's transaction, for work that may outlive the request (table statistics). */
  background?: Database;
  chains: ReadonlyMap<number, ChainConfig>;
  now: () => number;
  /** Forgets the cached sponsorship setup of one paymaster, so that its next sponsorship sees this write. */
  setupChanged: (apiKey: string) => void;
  /** Tells this instance's alerts that a paymaster's alert settings changed (others see it within seconds). */
  alertsChanged?: (paymasterId: string) => void;
}

/** Runs a write and turns a unique violation of a named constraint into the client's error for it. */
export async function unlessTaken<T>(write: Promise<T>, errors: Record<string, () => Error>): Promise<T> {
  try {
    return await write;
  } catch (error) {
    const mapped = error instanceof UniqueViolation && error.constraint ? errors[error.constraint] : undefined;
    if (mapped) throw Object.assign(mapped(), { cause: error });
    throw error;
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ids are UUIDs; anything else cannot name a record, so it is not found without asking the database. */
export const isUuid = (value: unknown): value is string => typeof value === "string" && UUID.test(value);

/** Checks that the service may call a webhook URL (see src/http/webhookUrl.ts); refuses with a 400 naming `field`. */
export type UrlCheck = (url: string, field: string) => Promise<void>;
