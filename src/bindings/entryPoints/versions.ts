// The one registry of the EntryPoint versions the service signs for: each version's name and its implementation of
// EntryPointVersion (entryPointVersion.ts). The rest of the service looks versions up here, never in v06.ts or v07.ts
// directly, so a new version is one implementation file beside these, one line below and its addresses in the chains
// file's `entryPoints` schema (src/config.ts), whose keys the type below requires this table to cover.
import type { LaterEntryPointVersion } from "../../config";
import { ENTRY_POINT_V07_ADDRESS, ENTRY_POINT_V08_ADDRESS } from "./entryPointV07";
import type { EntryPointVersion } from "./entryPointVersion";
import { entryPointV06, type SignableUserOperation } from "./v06";
import { entryPointV07, type SignableUserOperationV07 } from "./v07";
import { entryPointV09 } from "./v09";

export type { LaterEntryPointVersion };

/** Every EntryPoint version the service signs for: v0.6, the chain's own `entryPoint`, and the later ones. */
export type KnownEntryPointVersion = "0.6" | LaterEntryPointVersion;

export const ENTRY_POINT_VERSIONS = {
  "0.6": entryPointV06,
  "0.7": entryPointV07("0.7", ENTRY_POINT_V07_ADDRESS, false),
  "0.8": entryPointV07("0.8", ENTRY_POINT_V08_ADDRESS, true),
  "0.9": entryPointV09,
} as const satisfies { "0.6": EntryPointVersion<SignableUserOperation> } & Record<
  LaterEntryPointVersion,
  EntryPointVersion<SignableUserOperationV07>
>;
