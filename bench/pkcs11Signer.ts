// Signatures per second from a PKCS#11 token (SoftHSM2, with a token and a non-extractable secp256k1 key made for the
// run), against the key-file signer measured in the same run, one signature at a time and with many in flight.
//   npx tsx bench/pkcs11Signer.ts [signatures per figure, default 3000] [sessions, default 1,2,4]
// Each figure: the median of three passes. Needs softhsm2 and opensc (apt-get install softhsm2 opensc).
import { performance } from "node:perf_hooks";
import { keccak256, toHex } from "viem";
import { generatePrivateKey } from "viem/accounts";
import { Pkcs11Signer } from "../src/signer/pkcs11Signer";
import { createSigner, type Signer } from "../src/signer/signer";
import { createSoftHsm } from "../test/helpers/softHsm";

const count = Number(process.argv[2] ?? 3000);
const sessionCounts = (process.argv[3] ?? "1,2,4").split(",").map(Number);
const IN_FLIGHT = 64;

const hsm = createSoftHsm();
hsm.useInThisProcess();
hsm.addToken("bench", "1234");
hsm.addKey({ label: "bench", pin: "1234" }, "signer");

let offset = 0;
/** Signatures per second over `count` new hashes, `inFlight` at a time. */
async function rate(signer: Signer, inFlight: number): Promise<number> {
  const hashes = Array.from({ length: count }, (_, i) => keccak256(toHex(offset + i)));
  offset += count;
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      for (let i = next++; i < hashes.length; i = next++) await signer.signHash(hashes[i] as `0x${string}`);
    }),
  );
  return count / ((performance.now() - started) / 1000);
}

async function median(signer: Signer, inFlight: number): Promise<number> {
  await rate(signer, inFlight); // warm-up: JIT, the module's first operations
  const passes = [await rate(signer, inFlight), await rate(signer, inFlight), await rate(signer, inFlight)];
  return passes.sort((a, b) => a - b)[1] as number;
}

const rows: Record<string, Record<string, string>> = {};
const keyFile = createSigner(generatePrivateKey());
rows["key file (native secp256k1)"] = {
  "1 in flight": (await median(keyFile, 1)).toFixed(0),
  [`${IN_FLIGHT} in flight`]: (await median(keyFile, IN_FLIGHT)).toFixed(0),
};
for (const sessions of sessionCounts) {
  const signer = Pkcs11Signer.open(hsm.signerConfig("bench", "signer", "1234", sessions));
  try {
    rows[`PKCS#11 SoftHSM2, ${sessions} session${sessions > 1 ? "s" : ""}`] = {
      "1 in flight": (await median(signer, 1)).toFixed(0),
      [`${IN_FLIGHT} in flight`]: (await median(signer, IN_FLIGHT)).toFixed(0),
    };
  } finally {
    signer.close();
  }
}
console.log(`signatures per second (hash given; EIP-191 digest, sign, low s, recovery id), median of 3 × ${count}:`);
console.table(rows);
console.log(
  `UV_THREADPOOL_SIZE ${process.env.UV_THREADPOOL_SIZE ?? "4 (default)"}; the machine has ${(await import("node:os")).availableParallelism()} cores`,
);
hsm.remove();
