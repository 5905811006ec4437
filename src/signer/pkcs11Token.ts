// Opening the signer key in a PKCS#11 token: load the module, find the token by its label, log in with the PIN from
// its file, find the private key by its label and read its public key (the address is derived from it). Every failure
// is a ConfigError naming the SIGNER_PKCS11_* setting to change, since a start-up with a wrong module, token, key or
// PIN is an operator's mistake, not a crash. The key itself is never read: a token's key is usually non-extractable,
// and signing happens inside the token.
import { readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import type * as Pkcs11 from "pkcs11js";
import { ConfigError, type Pkcs11SignerConfig, Secret } from "../config";

export type Pkcs11Module = typeof Pkcs11;
export type Handle = Pkcs11.Handle;

/** DER of the object identifier of secp256k1 (1.3.132.0.10), as CKA_EC_PARAMS holds it. */
const SECP256K1_EC_PARAMS = Buffer.from("06052b8104000a", "hex");

/**
 * pkcs11js is an optional dependency (a native module built by node-gyp on install): a deployment without an HSM
 * installs with --omit=optional and needs no compiler, so it is loaded only when a PKCS#11 signer is configured.
 */
function loadPkcs11Binding(): Pkcs11Module {
  try {
    return createRequire(import.meta.url)("pkcs11js") as Pkcs11Module;
  } catch (error) {
    throw new ConfigError(
      "SIGNER_PKCS11_MODULE is set, but the PKCS#11 binding (the optional npm package pkcs11js) is not installed or " +
        `did not build: install without --omit=optional, on a machine with a C++ compiler, make and Python for node-gyp (${(error as Error).message.split("\n")[0]})`,
    );
  }
}

/** What the signer needs of an opened token: the module, the slot, the PIN (to log in again) and the key's handles. */
export interface OpenedToken {
  binding: Pkcs11Module;
  module: Pkcs11.PKCS11;
  slot: Handle;
  pin: Secret;
  /** The private key's handle, as found through `session`. */
  key: Handle;
  /** 0x04 ‖ X ‖ Y, 65 bytes. */
  publicKey: Uint8Array;
  /** Whether the token would let the key out (CKA_EXTRACTABLE): it works, but an HSM key should not allow it. */
  extractable: boolean;
  /** The session the key was found through, logged in; the signer keeps it as its first. */
  session: Handle;
}

/** The Cryptoki return value's name (CKR_PIN_INCORRECT, …) of an error from the binding, or its message. */
export function pkcs11ErrorName(error: unknown): string {
  return (error as Error)?.message?.split("\n")[0] ?? String(error);
}

export function openToken(config: Pkcs11SignerConfig): OpenedToken {
  const binding = loadPkcs11Binding();
  const pin = readPin(config.pinFile);
  const module = new binding.PKCS11();
  try {
    module.load(config.module);
  } catch (error) {
    throw new ConfigError(
      `SIGNER_PKCS11_MODULE ${config.module} cannot be loaded as a PKCS#11 module: ${pkcs11ErrorName(error)}`,
    );
  }
  let initializedHere = false;
  try {
    initializedHere = initialize(binding, module, config);
    const slot = findSlot(binding, module, config);
    const session = module.C_OpenSession(slot, binding.CKF_SERIAL_SESSION);
    logIn(binding, module, session, pin, config);
    const { key, publicKey, extractable } = findKey(binding, module, session, config);
    return { binding, module, slot, pin, key, publicKey, extractable, session };
  } catch (error) {
    // Nothing half-open is left behind: a failed start releases the module (a test or a retry may open it again),
    // unless another signer of this process had initialised it and still uses it.
    if (initializedHere) {
      try {
        module.C_Finalize();
      } catch {
        // already finalised
      }
    }
    throw error;
  }
}

/** The user PIN, from a file only its owner may read (a PIN in the environment would show in /proc and crash dumps). */
function readPin(file: string): Secret {
  let text: string;
  try {
    if ((statSync(file).mode & 0o077) !== 0) {
      throw new ConfigError(`SIGNER_PKCS11_PIN_FILE ${file} must be readable by its owner only (chmod 600)`);
    }
    text = readFileSync(file, "utf8");
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    throw new ConfigError(`SIGNER_PKCS11_PIN_FILE ${file} cannot be read: ${(error as NodeJS.ErrnoException).code}`);
  }
  const pin = text.replace(/\r?\n$/, "");
  if (pin === "") throw new ConfigError(`SIGNER_PKCS11_PIN_FILE ${file} is empty: it must hold the token's user PIN`);
  return new Secret(pin);
}

/** Initialises the module; false when this process had done so already (the module is shared per process). */
function initialize(binding: Pkcs11Module, module: Pkcs11.PKCS11, config: Pkcs11SignerConfig): boolean {
  try {
    // The binding's calls run on libuv's threads (C_SignAsync): the module must lock for itself.
    module.C_Initialize({ flags: binding.CKF_OS_LOCKING_OK });
    return true;
  } catch (error) {
    // Initialised earlier in this process, by another signer of ours (with the same flag). Whoever initialises first
    // decides the locking: a module initialised without arguments may take no locks at all (SoftHSM2 does not), so
    // nothing else in the process may initialise it first (the tests' second view of the module asks for locking too).
    if (pkcs11ErrorName(error) === "CKR_CRYPTOKI_ALREADY_INITIALIZED") return false;
    throw new ConfigError(
      `SIGNER_PKCS11_MODULE ${config.module}: the module failed to initialise (${pkcs11ErrorName(error)}); check its own configuration (for SoftHSM2, SOFTHSM2_CONF and its token folder)`,
    );
  }
}

function findSlot(binding: Pkcs11Module, module: Pkcs11.PKCS11, config: Pkcs11SignerConfig): Handle {
  const labels: string[] = [];
  for (const slot of module.C_GetSlotList(true)) {
    const info = module.C_GetTokenInfo(slot);
    // A module may offer empty slots to make tokens in (SoftHSM2 always has one): no token there yet.
    if ((info.flags & binding.CKF_TOKEN_INITIALIZED) === 0) continue;
    const label = info.label.trim();
    if (label === config.tokenLabel) return slot;
    labels.push(`"${label}"`);
  }
  throw new ConfigError(
    `SIGNER_PKCS11_TOKEN_LABEL "${config.tokenLabel}": no token with this label in ${config.module} (tokens present: ${labels.join(", ") || "none"})`,
  );
}

function logIn(
  binding: Pkcs11Module,
  module: Pkcs11.PKCS11,
  session: Handle,
  pin: Secret,
  config: Pkcs11SignerConfig,
): void {
  try {
    module.C_Login(session, binding.CKU_USER, pin.reveal());
  } catch (error) {
    const name = pkcs11ErrorName(error);
    if (name === "CKR_USER_ALREADY_LOGGED_IN") return;
    const why =
      name === "CKR_PIN_INCORRECT"
        ? "the token refused the PIN"
        : name === "CKR_PIN_LOCKED"
          ? "the token has locked the PIN after too many wrong tries"
          : "logging in failed";
    throw new ConfigError(`SIGNER_PKCS11_PIN_FILE ${config.pinFile}: ${why} (${name}) on token "${config.tokenLabel}"`);
  }
}

function findObjects(module: Pkcs11.PKCS11, session: Handle, template: Pkcs11.Template): Handle[] {
  module.C_FindObjectsInit(session, template);
  try {
    return module.C_FindObjects(session, 16);
  } finally {
    module.C_FindObjectsFinal(session);
  }
}

/** The private key labelled `keyLabel`, checked to be a secp256k1 signing key, and its public key. */
export function findKey(
  binding: Pkcs11Module,
  module: Pkcs11.PKCS11,
  session: Handle,
  config: Pick<Pkcs11SignerConfig, "keyLabel" | "tokenLabel">,
): { key: Handle; publicKey: Uint8Array; extractable: boolean } {
  const where = `SIGNER_PKCS11_KEY_LABEL "${config.keyLabel}"`;
  const keys = findObjects(module, session, [
    { type: binding.CKA_CLASS, value: binding.CKO_PRIVATE_KEY },
    { type: binding.CKA_LABEL, value: config.keyLabel },
  ]);
  const [key] = keys;
  if (key === undefined) {
    throw new ConfigError(`${where}: no private key with this label on token "${config.tokenLabel}"`);
  }
  if (keys.length > 1) {
    throw new ConfigError(`${where}: ${keys.length} private keys on token "${config.tokenLabel}" have this label`);
  }
  const [keyType, params, canSign, extractable, id] = module.C_GetAttributeValue(session, key, [
    { type: binding.CKA_KEY_TYPE },
    { type: binding.CKA_EC_PARAMS },
    { type: binding.CKA_SIGN },
    { type: binding.CKA_EXTRACTABLE },
    { type: binding.CKA_ID },
  ]);
  const isEc = keyType?.value !== undefined && ulong(keyType.value) === binding.CKK_EC;
  if (!isEc || !params?.value?.equals(SECP256K1_EC_PARAMS)) {
    throw new ConfigError(`${where}: the key is not an elliptic-curve key on secp256k1, Ethereum's curve`);
  }
  if (!canSign?.value?.[0]) throw new ConfigError(`${where}: the key may not sign (CKA_SIGN is false)`);
  return {
    key,
    publicKey: publicKeyOf(binding, module, session, config, id?.value),
    extractable: Boolean(extractable?.value?.[0]),
  };
}

/** A CK_ULONG attribute: 8 bytes on 64-bit Unix, 4 on Windows, in the machine's (little-endian) order. */
function ulong(value: Buffer): number {
  return value.length === 8 ? Number(value.readBigUInt64LE()) : value.readUIntLE(0, Math.min(value.length, 6));
}

/** The key pair's public key object, found by the same label (or the private key's CKA_ID), as 0x04 ‖ X ‖ Y. */
function publicKeyOf(
  binding: Pkcs11Module,
  module: Pkcs11.PKCS11,
  session: Handle,
  config: Pick<Pkcs11SignerConfig, "keyLabel" | "tokenLabel">,
  id: Buffer | undefined,
): Uint8Array {
  const byLabel = findObjects(module, session, [
    { type: binding.CKA_CLASS, value: binding.CKO_PUBLIC_KEY },
    { type: binding.CKA_LABEL, value: config.keyLabel },
  ]);
  const byId =
    byLabel.length === 0 && id !== undefined && id.length > 0
      ? findObjects(module, session, [
          { type: binding.CKA_CLASS, value: binding.CKO_PUBLIC_KEY },
          { type: binding.CKA_ID, value: id },
        ])
      : [];
  const [object] = [...byLabel, ...byId];
  if (object === undefined) {
    throw new ConfigError(
      `SIGNER_PKCS11_KEY_LABEL "${config.keyLabel}": token "${config.tokenLabel}" has no public key with this label or the key's CKA_ID, which the address is derived from`,
    );
  }
  const [point] = module.C_GetAttributeValue(session, object, [{ type: binding.CKA_EC_POINT }]);
  const bytes = point?.value ?? Buffer.alloc(0);
  // CKA_EC_POINT is a DER OCTET STRING around the point (PKCS#11 2.40); some modules give the bare point.
  const raw = bytes.length === 67 && bytes[0] === 0x04 && bytes[1] === 0x41 ? bytes.subarray(2) : bytes;
  if (raw.length !== 65 || raw[0] !== 0x04) {
    throw new ConfigError(
      `SIGNER_PKCS11_KEY_LABEL "${config.keyLabel}": the public key is not an uncompressed secp256k1 point (${bytes.length} bytes)`,
    );
  }
  return Uint8Array.from(raw);
}
