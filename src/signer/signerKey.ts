import type { Hex } from "viem";
import { generatePrivateKey } from "viem/accounts";
import type { Pkcs11SignerConfig, SignerKeySource } from "../config";
import { readKeyFile } from "../keyFile";

/**
 * The verifying signer's private key. A key file must be readable by its owner only; on the embedded default it is
 * made on first start with mode 0600. Errors name the file, never the key.
 */
export function loadSignerKey(source: Exclude<SignerKeySource, Pkcs11SignerConfig>): Hex {
  if (source.kind === "env") return source.privateKey.reveal() as Hex;
  return readKeyFile(source, {
    label: "signer key",
    variables: "SIGNER_PRIVATE_KEY or SIGNER_KEY_FILE",
    why: "instances sharing a database must sign with the same key",
    generate: generatePrivateKey,
  }) as Hex;
}
