import { readFileSync, statSync, writeFileSync } from "node:fs";
import { ConfigError } from "./config";

const KEY = /^0x[0-9a-fA-F]{64}$/;

export interface KeyFileOptions {
  /** How errors name the key: "signer key", "webhook signing key". */
  label: string;
  /** The settings that name the key, for the error when a required file is absent: "A or B". */
  variables: string;
  /** Why the file is not made up when absent. */
  why: string;
  /** A new key (0x and 64 hex digits), for a file made on first start. */
  generate: () => string;
}

/**
 * Reads a 32-byte key (0x and 64 hex digits) from a file that only its owner may read; makes the file with mode 0600
 * when it is absent and `createIfMissing` (the embedded default). Errors name the file, never the key.
 */
export function readKeyFile(source: { path: string; createIfMissing: boolean }, options: KeyFileOptions): string {
  let text: string;
  try {
    text = readFileSync(source.path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" && !source.createIfMissing) {
      throw new ConfigError(
        `no ${options.label}: set ${options.variables} (${options.why}; ${source.path} does not exist)`,
      );
    }
    if (code !== "ENOENT") throw new ConfigError(`${options.label} file ${source.path} cannot be read: ${code}`);
    const key = options.generate();
    writeFileSync(source.path, `${key}\n`, { mode: 0o600, flag: "wx" });
    return key;
  }
  if ((statSync(source.path).mode & 0o077) !== 0) {
    throw new ConfigError(`${options.label} file ${source.path} must be readable by its owner only (chmod 600)`);
  }
  const key = text.trim();
  if (!KEY.test(key)) throw new ConfigError(`${options.label} file ${source.path} must hold 0x and 64 hex digits`);
  return key;
}
