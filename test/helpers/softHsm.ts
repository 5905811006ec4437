// A SoftHSM2 of the test's own: a configuration and a token folder in a temporary folder, tokens made with
// softhsm2-util and keys generated inside them with OpenSC's pkcs11-tool, sensitive and never extractable unless asked,
// as an operator would make them on a real HSM. SoftHSM2 is a real PKCS#11 module: the signer talks to it exactly as
// to a hardware one. `.ci/run` installs the Debian packages softhsm2 and opensc when they are missing.
import { execFileSync } from "node:child_process";
import { createPublicKey } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Address, Hex } from "viem";
import { publicKeyToAddress } from "viem/accounts";
import type { Pkcs11SignerConfig } from "../../src/config";

/** Where Debian (and Ubuntu) install SoftHSM2's module. */
const MODULE_PATHS = ["/usr/lib/softhsm/libsofthsm2.so", "/usr/lib/x86_64-linux-gnu/softhsm/libsofthsm2.so"];

export interface SoftHsm {
  /** The module's path, for SIGNER_PKCS11_MODULE. */
  module: string;
  /** SOFTHSM2_CONF: which configuration (and so which tokens) the module reads when it is initialised. */
  conf: string;
  /**
   * Points this process's SoftHSM2 at this configuration: the module reads SOFTHSM2_CONF when it is initialised, which
   * a signer opened in this process does (a service started as a child gets it from signerEnv instead).
   */
  useInThisProcess(): void;
  /** A new token with this label and user PIN (SO PIN: the PIN reversed). */
  addToken(label: string, pin: string): void;
  /** A key pair generated in the token, labelled `keyLabel`; `keyType` as pkcs11-tool takes it. */
  addKey(
    token: { label: string; pin: string },
    keyLabel: string,
    options?: { keyType?: string; extractable?: boolean },
  ): void;
  /**
   * A key's public key (0x04 ‖ X ‖ Y) as OpenSC reads it (DER SubjectPublicKeyInfo), decoded by OpenSSL: independent
   * of the signer's own reading of CKA_EC_POINT, which the tests check against it.
   */
  publicKeyOf(tokenLabel: string, keyLabel: string): Hex;
  /** The Ethereum address of that public key. */
  addressOf(tokenLabel: string, keyLabel: string): Address;
  /** A file holding `pin`, mode 0600. */
  pinFile(pin: string): string;
  /** The signer's configuration for a key of a token here. */
  signerConfig(tokenLabel: string, keyLabel: string, pin: string, sessions?: number): Pkcs11SignerConfig;
  /** The service's environment for the same. */
  signerEnv(tokenLabel: string, keyLabel: string, pin: string): Record<string, string>;
  remove(): void;
}

function moduleOnThisMachine(): string {
  const found = MODULE_PATHS.find((file) => existsSync(file));
  if (!found) {
    throw new Error(
      `SoftHSM2's PKCS#11 module is not installed (looked for ${MODULE_PATHS.join(", ")}): apt-get install softhsm2 opensc`,
    );
  }
  return found;
}

export function createSoftHsm(): SoftHsm {
  const module = moduleOnThisMachine();
  const folder = mkdtempSync(path.join(tmpdir(), "paymaster-softhsm-"));
  const tokens = path.join(folder, "tokens");
  mkdirSync(tokens);
  const conf = path.join(folder, "softhsm2.conf");
  writeFileSync(conf, `directories.tokendir = ${tokens}\nobjectstore.backend = file\nlog.level = ERROR\n`);
  // The tools find the module's configuration here; nothing else of the test run's environment is theirs.
  const env = { PATH: process.env.PATH, SOFTHSM2_CONF: conf };
  const run = (command: string, args: string[]) => execFileSync(command, args, { env, stdio: "pipe" });
  let pins = 0;
  return {
    module,
    conf,
    useInThisProcess() {
      process.env.SOFTHSM2_CONF = conf;
    },
    addToken(label, pin) {
      run("softhsm2-util", [
        "--init-token",
        "--free",
        "--label",
        label,
        "--pin",
        pin,
        "--so-pin",
        [...pin].reverse().join(""),
      ]);
    },
    addKey(token, keyLabel, options = {}) {
      run("pkcs11-tool", [
        ...["--module", module, "--token-label", token.label, "--login", "--pin", token.pin],
        ...["--keypairgen", "--key-type", options.keyType ?? "EC:secp256k1", "--label", keyLabel, "--usage-sign"],
        // Sensitive: the token never shows the key in clear; without --extractable it cannot be wrapped out either.
        "--sensitive",
        ...(options.extractable ? ["--extractable"] : []),
      ]);
    },
    publicKeyOf(tokenLabel, keyLabel) {
      const der = run("pkcs11-tool", [
        ...["--module", module, "--token-label", tokenLabel, "--read-object", "--type", "pubkey", "--label", keyLabel],
      ]);
      const jwk = createPublicKey({ key: der, format: "der", type: "spki" }).export({ format: "jwk" });
      const coordinate = (value: string | undefined) => Buffer.from(value ?? "", "base64url").toString("hex");
      return `0x04${coordinate(jwk.x)}${coordinate(jwk.y)}`;
    },
    addressOf(tokenLabel, keyLabel) {
      return publicKeyToAddress(this.publicKeyOf(tokenLabel, keyLabel));
    },
    pinFile(pin) {
      const file = path.join(folder, `pin-${++pins}`);
      writeFileSync(file, `${pin}\n`, { mode: 0o600 });
      chmodSync(file, 0o600);
      return file;
    },
    signerConfig(tokenLabel, keyLabel, pin, sessions = 4) {
      return { kind: "pkcs11", module, tokenLabel, keyLabel, pinFile: this.pinFile(pin), sessions };
    },
    signerEnv(tokenLabel, keyLabel, pin) {
      return {
        SOFTHSM2_CONF: conf,
        SIGNER_PKCS11_MODULE: module,
        SIGNER_PKCS11_TOKEN_LABEL: tokenLabel,
        SIGNER_PKCS11_KEY_LABEL: keyLabel,
        SIGNER_PKCS11_PIN_FILE: this.pinFile(pin),
      };
    },
    remove() {
      rmSync(folder, { recursive: true, force: true });
    },
  };
}
