// Benchmark: what PostgreSQL spends on the group commit's records' statement, per operation, by batch size, with the
// bench's two spending limits (a COUNT over the dApp, a NATIVE_ASSET per sender) and without limits (the baseline of
// the same run), for this checkout and, with --against DIR, another one in the same rounds.
//   npx tsx bench/recordStatement.ts [--batches 5,25] [--calls N] [--rounds 3] [--against DIR] [--instructions [--keep]]
// By default it reads the backend's CPU time from /proc, on the PostgreSQL of DATABASE_URL (default: the local test
// one); on a shared machine that spreads by a fifth between rounds. --instructions counts the backend's user-space
// instructions with callgrind instead, on a PostgreSQL server of its own started under valgrind (needs valgrind and
// PostgreSQL's server binaries; run as root, the server runs as the postgres user): a count stays within a few percent
// whatever else the machine does, but leaves out the kernel's part (socket, WAL flush).
// Each measure is a fresh backend's work for 2N batches less that of another fresh backend for N, after a warm-up in
// which every sender's usage row was made: what a batch costs once plans and caches are warm.
import { execFileSync, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { type Database, openDatabase } from "../src/storage/database";
import type { LimitClaim, SponsorshipLog, SponsorshipRecord } from "../src/storage/sponsorships";
import { processCpuMicros } from "./cpu";

const { values } = parseArgs({
  options: {
    batches: { type: "string", default: "5,25" },
    /** Default: 30 under callgrind; 1,000 for CPU time, which /proc gives in steps of 10 ms. */
    calls: { type: "string" },
    rounds: { type: "string", default: "3" },
    against: { type: "string" },
    instructions: { type: "boolean", default: false },
    /** With --instructions: keep callgrind's files (one per backend) for callgrind_annotate, and say where. */
    keep: { type: "boolean", default: false },
  },
});
const batchSizes = values.batches.split(",").map(Number);
const calls = Number(values.calls ?? (values.instructions ? 30 : 1000));
const rounds = Number(values.rounds);
/** As in the sponsorship bench's limited set-up: a request's sender is one of these, in turn. */
const SENDERS = 1000;

interface Build {
  label: string;
  openDatabase(options: { url: string }): Promise<Database>;
  migrate(db: Database): Promise<void>;
  newLog(db: Database): SponsorshipLog;
}

async function build(label: string, dir: string): Promise<Build> {
  const src = (file: string) => import(path.resolve(dir, "src/storage", file));
  const [database, migrations, sponsorships] = await Promise.all([
    src("database.ts"),
    src("migrations.ts"),
    src("sponsorships.ts"),
  ]);
  return {
    label,
    openDatabase: database.openDatabase,
    migrate: migrations.migrate,
    newLog: (db) => new sponsorships.SponsorshipLog(db, undefined, () => Date.now()),
  };
}

/** A PostgreSQL server to measure on. */
interface Server {
  url: string;
  /** What backend `pid` spent over its life, connection start included, its client closed by `close`. */
  spentBy(pid: number, close: () => Promise<void>): Promise<number>;
  stop(): Promise<void>;
}

/** DATABASE_URL's server: a backend's CPU time, read from /proc while it lives. */
function sharedServer(): Server {
  return {
    url: process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test",
    async spentBy(pid, close) {
      const spent = processCpuMicros(pid);
      await close();
      return spent;
    },
    stop: async () => {},
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A server of its own under callgrind: one count file per backend, written when the backend exits. */
async function callgrindServer(): Promise<Server> {
  const bin = execFileSync("sh", ["-c", "ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1"]).toString().trim();
  if (!existsSync(`${bin}/postgres`)) throw new Error("--instructions: no PostgreSQL server binaries found");
  const folder = mkdtempSync(path.join(tmpdir(), "records-bench-"));
  const asRoot = process.getuid?.() === 0;
  const run = (command: string[]) => (asRoot ? ["runuser", "-u", "postgres", "--", ...command] : command);
  if (asRoot) execFileSync("chown", ["postgres", folder]);
  const [initdb, ...initArgs] = run([`${bin}/initdb`, "-D", `${folder}/data`, "-A", "trust", "-U", "postgres"]);
  execFileSync(initdb as string, initArgs, { stdio: "ignore" });
  const port = 20000 + (process.pid % 20000);
  const [command, ...args] = run([
    "valgrind",
    "--tool=callgrind",
    `--callgrind-out-file=${folder}/backend.%p`,
    "--dump-instr=no",
    `${bin}/postgres`,
    "-D",
    `${folder}/data`,
    "-p",
    String(port),
    "-k",
    folder,
    "-c",
    "listen_addresses=127.0.0.1",
    // An analysis in the middle of a measure would make its backend plan again, counted as the statement's.
    "-c",
    "autovacuum=off",
  ]);
  const server = spawn(command as string, args, { stdio: "ignore" });
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  for (let started = Date.now(); ; await sleep(500)) {
    try {
      const db = await openDatabase({ url });
      await db.close();
      break;
    } catch {
      if (Date.now() - started > 120_000) throw new Error("the server under valgrind did not start in 120 s");
    }
  }
  return {
    url,
    async spentBy(pid, close) {
      await close();
      const file = `${folder}/backend.${pid}`;
      for (let waited = 0; !existsSync(file); waited += 100) {
        if (waited > 60_000) throw new Error(`no count from backend ${pid}`);
        await sleep(100);
      }
      // Written when the backend exits; give the write a moment to end.
      await sleep(300);
      return Number(readFileSync(file, "utf8").match(/^(?:summary|totals): (\d+)/m)?.[1]);
    },
    async stop() {
      // A fast shutdown, sent to the postmaster itself (runuser, when there is one, passes no signal on).
      const exited = new Promise((resolve) => server.once("exit", resolve));
      const pidFile = `${folder}/data/postmaster.pid`;
      process.kill(Number(readFileSync(pidFile, "utf8").split("\n")[0]), "SIGINT");
      await exited;
      if (values.keep) console.error(`callgrind's files kept in ${folder}`);
      else rmSync(folder, { recursive: true, force: true });
    },
  };
}

/** One build's database with a set-up (limits or none), and what a batch of `size` costs it. */
async function measuredSetUp(server: Server, admin: Database, b: Build, limits: boolean, size: number) {
  const name = `paymaster_records_${process.pid}_${b.label}_${limits ? "limits" : "none"}_${size}`;
  await admin.exec(`DROP DATABASE IF EXISTS ${name}`);
  await admin.exec(`CREATE DATABASE ${name}`);
  const url = server.url.replace(/\/[^/]*$/, `/${name}`);
  const setup = await b.openDatabase({ url });
  await b.migrate(setup);
  await setup.close();
  const paymasterId = randomUUID();
  const [countPolicy, nativePolicy] = [randomUUID(), randomUUID()];
  const senders = Array.from({ length: SENDERS }, (_, i) => `0x${(i + 1).toString(16).padStart(40, "0")}`);
  let nonce = 0n;
  const operation = (): [SponsorshipRecord, LimitClaim | undefined] => {
    const sender = senders[Number(nonce % BigInt(SENDERS))] as string;
    nonce++;
    const validUntil = Math.floor(Date.now() / 1000) + 600;
    const cycleStartMs = 1_764_979_200_000;
    const record: SponsorshipRecord = {
      paymasterId,
      chainId: 31337,
      sender,
      nonce,
      sponsored: true,
      userOpHash: `0x${randomUUID().replaceAll("-", "")}${randomUUID().replaceAll("-", "")}`,
      callGasLimit: 100_000n,
      verificationGasLimit: 150_000n,
      preVerificationGas: 50_000n,
      maxFeePerGas: 2_000_000_000n,
      maxPriorityFeePerGas: 1_000_000_000n,
      validUntil,
      validAfter: validUntil - 660,
      ruleOutcomes: [
        { rule: "whitelist", passed: true },
        { rule: "spendingLimits", passed: true },
      ],
      fundingAddress: "0x2222222222222222222222222222222222222222",
      paymasterAddress: "0x3333333333333333333333333333333333333333",
      maxCharge: 600_000_000_000_000n,
      entryPoint: "0x5ff137d4b0fdcd49dca30c7cf57e578a026d2789",
      mode: "SPONSORED",
      worstCaseWei: 600_000_000_000_000n,
    };
    const reservation = { cycleStartMs, sender, nonce, validUntil };
    const claim: LimitClaim = {
      rule: "spendingLimits",
      reservations: [
        { ...reservation, policyId: countPolicy, scopeKey: "", amount: 1n, threshold: 1_000_000_000n },
        {
          ...reservation,
          policyId: nativePolicy,
          scopeKey: sender,
          amount: record.maxCharge ?? 0n,
          threshold: 10n ** 24n,
        },
      ],
      refusal: () => "full",
    };
    return [record, limits ? claim : undefined];
  };
  /** What a fresh backend spent for `batches` batches of `size`, connection start included. */
  async function freshBackend(batches: number): Promise<number> {
    const db = await b.openDatabase({ url });
    const log = b.newLog(db);
    const backend = async () => {
      const rows = await admin.query<{ pid: number }>(
        "SELECT pid FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend'",
        [name],
      );
      if (rows.length !== 1) throw new Error(`expected one backend, found ${rows.length}`);
      return Number(rows[0]?.pid);
    };
    const send = () => Promise.all(Array.from({ length: size }, () => log.record(...operation())));
    await send();
    const pid = await backend();
    for (let i = 1; i < batches; i++) await send();
    return server.spentBy(pid, async () => {
      await db.close();
      // The next fresh backend must be alone on the database.
      const ended = Date.now() + 30_000;
      while ((await admin.query("SELECT 1 FROM pg_stat_activity WHERE pid = $1", [pid])).length > 0) {
        if (Date.now() > ended) throw new Error(`backend ${pid} did not end`);
        await sleep(50);
      }
    });
  }
  await freshBackend(Math.ceil(SENDERS / size));
  return {
    build: b.label,
    key: `${limits ? "COUNT + per-sender NATIVE_ASSET" : "records alone"}, batches of ${size}`,
    samples: [] as number[],
    async measure() {
      const once = await freshBackend(calls);
      const twice = await freshBackend(2 * calls);
      this.samples.push((twice - once) / calls / size);
    },
    drop: () => admin.exec(`DROP DATABASE ${name} WITH (FORCE)`),
  };
}

const builds = [await build("this", path.resolve(import.meta.dirname, ".."))];
if (values.against) builds.push(await build("against", values.against));
const server = values.instructions ? await callgrindServer() : sharedServer();
const admin = await (builds[0] as Build).openDatabase({ url: server.url });
try {
  const setUps = [];
  for (const size of batchSizes)
    for (const limits of [false, true])
      for (const b of builds) setUps.push(await measuredSetUp(server, admin, b, limits, size));
  for (let round = 1; round <= rounds; round++) {
    for (const setUp of setUps) await setUp.measure();
    console.error(`round ${round} of ${rounds} done`);
  }
  const unit = values.instructions ? "k instructions per operation" : "µs of backend CPU per operation";
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
  const shown = (xs: number[]) => {
    const scale = values.instructions ? 1000 : 1;
    return `${Math.round(median(xs) / scale)} (${Math.round(Math.min(...xs) / scale)}–${Math.round(Math.max(...xs) / scale)})`;
  };
  const table: Record<string, Record<string, string>> = {};
  for (const setUp of setUps) {
    table[setUp.key] ??= {};
    (table[setUp.key] as Record<string, string>)[setUp.build === "this" ? "this checkout" : (values.against ?? "")] =
      shown(setUp.samples);
  }
  console.log(
    `the records' statement on PostgreSQL: ${unit}, median (min–max) of ${rounds} rounds of ${calls} batches`,
  );
  console.table(table);
  for (const setUp of setUps) await setUp.drop();
} finally {
  await admin.close();
  await server.stop();
}
