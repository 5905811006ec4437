// Hash + sign of one sponsorship, native secp256k1 against viem's pure JavaScript, measured in the same run.
//   npx tsx bench/signer.ts [iterations]
import { performance } from "node:perf_hooks";
import { getVerifyingPaymasterHash } from "../src/bindings/paymasters/paymasterAndData";
import { createSigner, type SignerImplementation } from "../src/signer/signer";
import { vectorContext, vectorSignerKey, vectorUserOp } from "../test/chain/vector";

const iterations = Number(process.argv[2] ?? 5_000);

async function measure(label: string, step: (i: number) => Promise<unknown> | unknown): Promise<number> {
  for (let i = 0; i < 500; i++) await step(i); // warm up the JIT before timing
  const started = performance.now();
  for (let i = 0; i < iterations; i++) await step(i);
  const microseconds = ((performance.now() - started) * 1000) / iterations;
  console.log(`${label.padEnd(22)} ${microseconds.toFixed(1).padStart(7)} µs/op`);
  return microseconds;
}

// A different nonce each time, so no layer can serve a cached result.
const hashOf = (i: number) => getVerifyingPaymasterHash({ ...vectorUserOp, nonce: BigInt(i) }, vectorContext);

await measure("hash only", hashOf);
const results: Partial<Record<SignerImplementation, number>> = {};
for (const implementation of ["native", "viem"] as const) {
  const signer = createSigner(vectorSignerKey, { implementation });
  results[implementation] = await measure(`hash + sign, ${implementation}`, (i) => signer.signHash(hashOf(i)));
}
if (results.native && results.viem) console.log(`native is ${(results.viem / results.native).toFixed(1)}x faster`);
