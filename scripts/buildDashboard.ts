// Builds the web dashboard (dashboard/src, Preact) into dashboard/dist, which the service serves at /dashboard/:
// one script and one style sheet named by their content's hash, and an index.html that loads them. `npm start`,
// `npm test` and the production build (scripts/build.ts) run it first, so the dashboard is never a manual step.
// The build fails when what a browser downloads is over the budget.
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const DASHBOARD_SOURCE = join(root, "dashboard");
const DEFAULT_OUTDIR = join(DASHBOARD_SOURCE, "dist");

/** What a browser downloads for the first page (script and styles, gzipped) may not exceed this. */
export const DASHBOARD_BUDGET_GZIP_BYTES = 200 * 1024;

export interface DashboardBuild {
  outdir: string;
  /** The files written, by name. */
  files: string[];
  /** Script and styles together, gzipped: what the budget limits. */
  gzipBytes: number;
}

/**
 * Bundles the dashboard into `outdir`. Each file is written beside its final name and renamed into place, index.html
 * last, so that a service reading the folder meanwhile never sees half a file; files of earlier builds are removed.
 */
export async function buildDashboard(outdir = DEFAULT_OUTDIR): Promise<DashboardBuild> {
  const result = await build({
    absWorkingDir: root,
    entryPoints: [join(DASHBOARD_SOURCE, "src", "main.tsx")],
    bundle: true,
    minify: true,
    format: "esm",
    target: ["chrome109", "firefox115", "safari16"],
    jsx: "automatic",
    jsxImportSource: "preact",
    tsconfig: join(DASHBOARD_SOURCE, "tsconfig.json"),
    entryNames: "[name]-[hash]",
    outdir,
    write: false,
    metafile: true,
    legalComments: "none",
    logLevel: "warning",
  });
  const assets = result.outputFiles.map((file) => ({ name: basename(file.path), contents: file.contents }));
  const script = assets.find((file) => file.name.endsWith(".js"));
  const styles = assets.find((file) => file.name.endsWith(".css"));
  if (!script || !styles) throw new Error("the dashboard build made no script or no style sheet");
  const gzipBytes = assets.reduce((sum, file) => sum + gzipSync(file.contents).length, 0);
  if (gzipBytes > DASHBOARD_BUDGET_GZIP_BYTES) {
    throw new Error(`the dashboard is ${gzipBytes} bytes gzipped, over its budget of ${DASHBOARD_BUDGET_GZIP_BYTES}`);
  }
  const index = readFileSync(join(DASHBOARD_SOURCE, "index.html"), "utf8")
    .replace("%SCRIPT%", `./${script.name}`)
    .replace("%STYLES%", `./${styles.name}`);
  const written = [...assets, { name: "index.html", contents: Buffer.from(index) }];

  mkdirSync(outdir, { recursive: true });
  for (const file of written) {
    const temporary = join(outdir, `.${file.name}.${process.pid}.tmp`);
    writeFileSync(temporary, file.contents);
    renameSync(temporary, join(outdir, file.name));
  }
  const names = new Set(written.map((file) => file.name));
  for (const name of readdirSync(outdir)) {
    if (!names.has(name) && !name.endsWith(".tmp")) rmSync(join(outdir, name), { force: true });
  }
  return { outdir, files: [...names], gzipBytes };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const built = await buildDashboard();
  console.log(`built the dashboard: ${built.files.join(", ")} (${(built.gzipBytes / 1024).toFixed(1)} KB gzipped)`);
}
