// Compiles the service to dist/ for production: dist/main.js (the service), dist/cli/account.js (the account
// command) and dist/cli/contracts.js (the contracts command), each a bundle of our own code with the npm packages left
// as imports, and the web dashboard to dashboard/dist (scripts/buildDashboard.ts). The local development chain is a
// dynamic import, so it lands in a chunk of its own that only a development start loads. The build fails when a file
// a production start loads imports a package that is not in `dependencies` (npm install --omit=dev would lack it).
import { readFileSync, rmSync } from "node:fs";
import { builtinModules } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build, type Metafile } from "esbuild";
import { buildDashboard } from "./buildDashboard";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const outdir = join(root, "dist");
const entries = ["src/main.ts", "src/cli/account.ts", "src/cli/contracts.ts"];

const packageJson = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
  dependencies: Record<string, string>;
};

/** `viem/accounts` → `viem`, `@scope/name/sub` → `@scope/name`. */
function packageOf(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : (parts[0] as string);
}

const builtins = new Set(builtinModules);
const isBuiltin = (specifier: string) => specifier.startsWith("node:") || builtins.has(specifier);

/** The packages each output file imports statically, i.e. whenever it is loaded. */
function staticPackageImports(metafile: Metafile, file: string, seen = new Set<string>()): Set<string> {
  const packages = new Set<string>();
  if (seen.has(file)) return packages;
  seen.add(file);
  for (const imported of metafile.outputs[file]?.imports ?? []) {
    if (imported.kind === "dynamic-import") continue;
    if (imported.external) {
      if (!isBuiltin(imported.path)) packages.add(packageOf(imported.path));
    } else {
      for (const name of staticPackageImports(metafile, imported.path, seen)) packages.add(name);
    }
  }
  return packages;
}

rmSync(outdir, { recursive: true, force: true });
const result = await build({
  absWorkingDir: root,
  entryPoints: entries,
  outdir,
  outbase: "src",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  packages: "external",
  chunkNames: "chunks/[name]-[hash]",
  sourcemap: true,
  metafile: true,
  logLevel: "warning",
});

const missing: string[] = [];
for (const entry of ["dist/main.js", "dist/cli/account.js", "dist/cli/contracts.js"]) {
  for (const name of staticPackageImports(result.metafile, entry)) {
    if (!packageJson.dependencies[name]) missing.push(`${entry} imports ${name}, which is not in dependencies`);
  }
}
if (missing.length > 0) {
  console.error(`The production build would not run with --omit=dev:\n${missing.join("\n")}`);
  process.exit(1);
}
// The web dashboard the service serves at /dashboard/ (dashboard/dist, which the pack carries).
const dashboard = await buildDashboard();
console.log(`built the dashboard (${(dashboard.gzipBytes / 1024).toFixed(1)} KB gzipped)`);
console.log(
  `built ${Object.keys(result.metafile.outputs)
    .filter((f) => f.endsWith(".js"))
    .join(", ")}`,
);
