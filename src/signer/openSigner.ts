import type { SignerKeySource } from "../config";
import { Pkcs11Signer } from "./pkcs11Signer";
import { createSigner, type Signer } from "./signer";
import { loadSignerKey } from "./signerKey";

/** A signer that may hold resources to release at shutdown (a PKCS#11 module's sessions). */
export type OpenedSigner = Signer & { close?: () => void };

/**
 * The verifying signer the configuration names: a key from the environment or a key file, or a key in a PKCS#11 token.
 * The service and every command that signs for the paymasters open it here, so they all sign with the same key.
 */
export function openSigner(source: SignerKeySource): OpenedSigner {
  if (source.kind === "pkcs11") return Pkcs11Signer.open(source);
  return createSigner(loadSignerKey(source));
}
