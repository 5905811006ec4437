import { execFile } from "node:child_process";
import { existsSync, renameSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { promisify } from "node:util";

/**
 * Creating a PGlite cluster (its initdb, on the first start over a data folder) leaves about 350 MB of WebAssembly
 * memory and heap in the process that ran it, never given back while that process lives; opening an existing cluster
 * costs a third of that. So a folder that does not exist yet gets its cluster from a short-lived child process, which
 * writes it beside the folder and renames it into place: the service then opens it as on any restart, and a creation
 * cut short (a crash, a kill) leaves no half-made cluster behind, only a `.creating` folder the next try removes.
 *
 * A folder that exists is left to PGlite as it is.
 */
export async function createPgliteCluster(folder: string, startParams: readonly string[]): Promise<void> {
  if (existsSync(folder)) return;
  const creating = `${folder}.creating`;
  const pglite = createRequire(import.meta.url).resolve("@electric-sql/pglite");
  try {
    // The data folder's lock is held by the caller: a leftover here is from a creation that did not finish.
    rmSync(creating, { recursive: true, force: true });
    await promisify(execFile)(
      process.execPath,
      ["-e", CREATE_IN_CHILD, pglite, creating, JSON.stringify(startParams)],
      {
        // The child inherits the environment and the umask (the caller made new files private).
        timeout: CREATE_TIMEOUT_MS,
      },
    );
    renameSync(creating, folder);
  } catch (error) {
    // Nothing half-made stays; where even that fails (the path is unusable), the error below says why.
    try {
      rmSync(creating, { recursive: true, force: true });
    } catch {}
    const stderr = String((error as { stderr?: unknown }).stderr ?? "").trim();
    const reason = stderr.split("\n").find((line) => line.startsWith("Error:")) ?? (error as Error).message;
    throw new Error(`could not create the embedded database in ${folder}: ${reason}`);
  }
}

/** Generous: it takes 3 to 6 s on a loaded 2-core machine. */
const CREATE_TIMEOUT_MS = 120_000;

/** The child: PGlite's CommonJS build, the folder and the start parameters as arguments; an error exits non-zero. */
const CREATE_IN_CHILD = `
const { PGlite } = require(process.argv[1]);
(async () => {
  const db = new PGlite({ dataDir: process.argv[2], startParams: JSON.parse(process.argv[3]) });
  await db.waitReady;
  await db.close();
})().catch((error) => {
  console.error("Error:", error && error.message ? error.message : error);
  process.exit(1);
});
`;
