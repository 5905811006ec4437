import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { parse } from "yaml";
import { createMetrics } from "../../src/metrics/metrics";
import { ENVIRONMENT_VARIABLES } from "../../src/schemas/config/environment";

// The deployment files cannot be run here (no container engine): these checks keep them in step with the code that
// test/service/production.test.ts runs the same way without a container.
const ROOT = path.resolve(import.meta.dirname, "../..");
const read = (file: string) => readFileSync(path.join(ROOT, file), "utf8");

/** Every environment variable the service reads: src/config.ts reads exactly those its schema lists. */
function configVariables(): string[] {
  return [...ENVIRONMENT_VARIABLES].sort();
}

test("config.ts reads the environment through its schema only, and the schema lists the variables it uses", () => {
  const names = configVariables();
  for (const known of [
    "DATABASE_URL",
    "LOCAL_CHAIN",
    "PORT",
    "SIGNER_PRIVATE_KEY",
    "METRICS_TOKEN",
    "SHUTDOWN_TIMEOUT_MS",
  ]) {
    assert.ok(names.includes(known), `${known} is in src/schemas/config/environment.ts`);
  }
  // A variable read by name (env.X or env["X"]) would bypass the schema, and so these files' checks.
  assert.doesNotMatch(read("src/config.ts"), /\benv(\.[A-Z]|\[")/);
});

test(".env.example names every variable the service reads, each with a comment", () => {
  const lines = read(".env.example").split("\n");
  for (const name of configVariables()) {
    const index = lines.findIndex((line) => line.startsWith(`${name}=`));
    assert.ok(index > 0, `.env.example lists ${name}`);
    assert.match(lines[index - 1] as string, /^# /, `${name} has its meaning and default in a comment above it`);
  }
});

test("compose.yaml: PostgreSQL and two service instances sharing it, each given every variable the service reads", () => {
  const compose = parse(read("compose.yaml"), { merge: true }) as {
    services: Record<string, { image?: string; build?: string; environment?: Record<string, unknown> }>;
  };
  assert.match(compose.services.postgres?.image ?? "", /^postgres:/);
  const instances = Object.entries(compose.services).filter(([, service]) => service.build === ".");
  assert.equal(instances.length, 2);
  for (const [name, service] of instances) {
    const environment = service.environment ?? {};
    for (const variable of configVariables()) {
      assert.ok(Object.hasOwn(environment, variable), `${name} sets ${variable}`);
    }
    assert.match(String(environment.DATABASE_URL), /@postgres:5432\//, `${name} uses the compose PostgreSQL`);
    assert.equal(environment.NODE_ENV, "production");
  }
});

test("Dockerfile: a build stage, then a slim runtime stage of the pack, non-root, with a HEALTHCHECK and NODE_ENV=production", () => {
  const dockerfile = read("Dockerfile").replace(/\\\n/g, " ");
  const stages = dockerfile.split(/^FROM /m).slice(1);
  assert.ok(stages.length >= 2, "multi-stage");
  const runtime = stages.at(-1) as string;
  assert.match(runtime, /^\S+-slim\b/, "the runtime stage is a slim image");
  assert.match(runtime, /^COPY --from=build /m, "it copies the build stage's output");
  assert.match(stages[0] as string, /npm pack/, "the build stage packs the same `files` the test installs");
  assert.match(runtime, /npm install --omit=dev --omit=optional /, "production dependencies only");
  const user = /^USER (\S+)/m.exec(runtime)?.[1];
  assert.ok(user && user !== "root" && user !== "0", "a USER other than root");
  assert.match(runtime, /^HEALTHCHECK .*\/healthz/m);
  assert.match(runtime, /^ENV .*\bNODE_ENV=production\b/m);
  assert.match(runtime, /^CMD \[.*"dist\/main\.js"\]/m, "it starts what the build writes");
  const files = (JSON.parse(read("package.json")) as { files: string[] }).files;
  assert.deepEqual(files.sort(), ["config", "dashboard/dist", "dist"]);
});

test("the example Prometheus rules parse, and every metric they use is one the service exports", async () => {
  const rules = parse(read("deploy/prometheus-rules.yml")) as {
    groups: { name: string; rules: { alert: string; expr: string; labels: { severity: string } }[] }[];
  };
  const exported = new Set(
    (await createMetrics({ processMetrics: true }).registry.getMetricsAsJSON()).map((metric) => metric.name),
  );
  const alerts = rules.groups.flatMap((group) => group.rules);
  assert.ok(alerts.length >= 5);
  for (const rule of alerts) {
    assert.match(rule.alert, /^Paymaster\w+$/);
    assert.match(rule.labels.severity, /^(critical|warning)$/);
    for (const [name] of rule.expr.matchAll(/\b(paymaster|nodejs|process)_\w+/g)) {
      const base = name.replace(/_(bucket|count|sum)$/, "");
      assert.ok(exported.has(base), `${rule.alert} uses ${name}, which /metrics exports`);
    }
  }
});

test("README, docs/operations.md and the Dockerfile install the pack alike, leaving out optional peers as well", () => {
  // --omit=dev alone installs typescript and zod, development packages that viem and abitype name as optional peers.
  const install = "npm install --omit=dev --omit=optional --no-audit --no-fund";
  // The one exception: an install for a signer key in an HSM keeps the optional packages, since the PKCS#11 binding
  // (pkcs11js) is one; it is given once, in that section of docs/operations.md.
  const hsmInstall = "npm install --omit=dev --no-audit --no-fund";
  const operations = read("docs/operations.md");
  const hsmSection = operations.slice(operations.indexOf("### The signer key in an HSM (PKCS#11)"));
  assert.equal(operations.split(hsmInstall).length, 2, "the HSM install is given once");
  assert.ok(hsmSection.slice(0, hsmSection.indexOf("\n### ", 1)).includes(hsmInstall), "in the HSM section");
  for (const file of ["README.md", "docs/operations.md", "Dockerfile"]) {
    const commands = read(file).match(/npm install --omit=dev[^\n]*?--no-fund/g) ?? [];
    assert.ok(commands.length > 0, `${file} installs the pack`);
    for (const command of commands) {
      if (file !== "docs/operations.md" || command !== hsmInstall) assert.equal(command, install, file);
    }
  }
  assert.match(read("test/service/production.test.ts"), /"--omit=dev", "--omit=optional"/, "and so does the test");
});
