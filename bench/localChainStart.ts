// The local development chain's start: a fresh data folder (everything deployed) and a restart over it (the saved
// state loaded, nothing sent), several rounds, with how long the smart accounts' families take (Safe, Kernel, Nexus,
// Coinbase Smart Wallet: src/devChain/accountFamilies.ts) beside the rest of the deployment, and the saved state's size.
// What they add to a start is an A/B against a checkout without them (docs/local-chain.md gives one).
//   npx tsx bench/localChainStart.ts [rounds]
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { ANVIL_STATE_FILE, startLocalChain } from "../src/devChain/localChain";

const rounds = Number(process.argv[2] ?? 5);
/** anvil's second default account: any address serves as the service's signer here. */
const SIGNER = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;

const fresh = { totalMs: [] as number[], deployMs: [] as number[], accountsMs: [] as number[] };
const restart = { totalMs: [] as number[], accountsMs: [] as number[] };
let stateBytes = 0;
for (let round = 0; round < rounds; round++) {
  const dataDir = mkdtempSync(path.join(tmpdir(), "bench-local-chain-"));
  try {
    let started = performance.now();
    const first = await startLocalChain({ dataDir, signer: SIGNER });
    fresh.totalMs.push(performance.now() - started);
    fresh.deployMs.push(first.timings.deployMs);
    fresh.accountsMs.push(first.timings.accountsMs);
    await first.stop();
    stateBytes = statSync(path.join(dataDir, ANVIL_STATE_FILE)).size;
    started = performance.now();
    const second = await startLocalChain({ dataDir, signer: SIGNER });
    restart.totalMs.push(performance.now() - started);
    restart.accountsMs.push(second.timings.accountsMs);
    await second.stop();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
const ms = (values: number[]) => `${Math.round(median(values))} ms`.padStart(8);
console.log(`rounds: ${rounds} (medians)`);
console.log(
  `fresh start   ${ms(fresh.totalMs)}  deployment ${ms(fresh.deployMs)}  account families (beside the rest) ${ms(fresh.accountsMs)}`,
);
console.log(`restart       ${ms(restart.totalMs)}  account families (checks only) ${ms(restart.accountsMs)}`);
console.log(`saved state   ${(stateBytes / 1024).toFixed(0)} kB`);
