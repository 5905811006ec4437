import { readFileSync, statSync, writeFileSync } from "node:fs";
import type { Hex } from "viem";
import { generatePrivateKey } from "viem/accounts";
import { ConfigError, type SignerKeySource } from "../config";

const PRIVATE_KEY = /^0x[0-9a-fA-F]{64}$/;

/**
 * The verifying signer's private key. A key file must be readable by its owner only; on the embedded default it is
 * made on first start with mode 0600. Errors name the file, never the key.
 */
export function loadSignerKey(source: SignerKeySource): Hex {
  if (source.kind === "env") return source.privateKey.reveal() as Hex;
  let text: string;
  try {
    text = readFileSync(source.path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" && !source.createIfMissing) {
      throw new ConfigError(
        `no signer key: set SIGNER_PRIVATE_KEY or SIGNER_KEY_FILE (instances sharing a database must sign with the same key; ${source.path} does not exist)`,
      );
    }
    if (code !== "ENOENT") {
      throw new ConfigError(`signer key file ${source.path} cannot be read: ${code}`);
    }
    const key = generatePrivateKey();
    writeFileSync(source.path, `${key}\n`, { mode: 0o600, flag: "wx" });
    return key;
  }
  if ((statSync(source.path).mode & 0o077) !== 0) {
    throw new ConfigError(`signer key file ${source.path} must be readable by its owner only (chmod 600)`);
  }
  const key = text.trim();
  if (!PRIVATE_KEY.test(key)) throw new ConfigError(`signer key file ${source.path} must hold 0x and 64 hex digits`);
  return key as Hex;
}
