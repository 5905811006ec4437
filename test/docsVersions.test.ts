// Every EntryPoint version the service serves (the keys of ENTRY_POINT_VERSIONS, src/bindings/entryPoints/versions.ts)
// is named wherever the docs and the published documents list the versions: a version added to the registry without
// its documentation fails here, one test per place, the test's name saying where to add it.
//
// The places are listed below, each with the versions it must name: every version, or the later ones only (v0.6 keeps
// its own operation shape and the chain's top-level fields; the later versions share the v0.7 shape and the chains
// file's `entryPoints` key), and how the place spells a version: `v0.9` in prose, `"0.9"` where the place lists keys
// or values, a bare `0.9` in a comma-separated list. Each place is cut out narrowly (a paragraph, a table row, one
// description), so a version named elsewhere on the page does not count for it; a place that can no longer be found
// (a heading renamed, a paragraph rewritten) fails too, saying what it looked for.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { ENTRY_POINT_VERSIONS } from "../src/bindings/entryPoints/versions";
import { openRpcDocument } from "../src/rpc/openrpc";
import { listChainsSchema } from "../src/schemas/management/chains";

const ROOT = path.resolve(import.meta.dirname, "..");

/** Every version the service serves, and the later ones (all but v0.6). */
const SERVED: readonly string[] = Object.keys(ENTRY_POINT_VERSIONS);
const LATER: readonly string[] = SERVED.filter((version) => version !== "0.6");

type Spelling = "prose" | "quoted" | "list";

const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Whether `text` names `version` in the place's spelling. */
function names(text: string, version: string, spelling: Spelling): boolean {
  const v = literal(version);
  switch (spelling) {
    // v0.9, but not v0.90 or v0.9.1
    case "prose":
      return new RegExp(`(?<![\\w.])v${v}(?!\\.?\\d)`).test(text);
    case "quoted":
      return text.includes(`"${version}"`);
    case "list":
      return text
        .split(",")
        .map((item) => item.trim())
        .includes(version);
  }
}

interface Place {
  /** Where the place is, as a reader finds it: the file and the heading, or the document and the member. */
  where: string;
  versions: readonly string[];
  spelling: Spelling;
  /** The place's text (several copies, each checked, for a schema the document repeats); throws when not found. */
  text: () => string | readonly string[];
}

const read = (file: string) => readFileSync(path.join(ROOT, file), "utf8");

/** The lines of a Markdown section, from its heading to the next heading of its level or above (code blocks skipped). */
function section(file: string, heading: string): string {
  const lines = read(file).split("\n");
  const start = lines.indexOf(heading);
  if (start === -1) throw new Error(`${file} has no heading ${JSON.stringify(heading)}`);
  const level = (heading.match(/^#+/) ?? [""])[0].length;
  let inCode = false;
  let end = lines.length;
  for (let index = start + 1; index < lines.length; index++) {
    const line = lines[index] ?? "";
    if (line.trimStart().startsWith("```")) inCode = !inCode;
    const match = !inCode && line.match(/^(#+) /);
    if (match && (match[1] ?? "").length <= level) {
      end = index;
      break;
    }
  }
  return lines.slice(start + 1, end).join("\n");
}

/** The paragraph (lines between blank lines) of `text` that holds `phrase`. */
function paragraph(text: string, phrase: string, where: string): string {
  const found = text.split(/\n\s*\n/).find((block) => block.includes(phrase));
  if (found === undefined) throw new Error(`${where}: no paragraph holds ${JSON.stringify(phrase)}`);
  return found;
}

/** The first match's group 1 of `pattern` in `text`. */
function captured(text: string, pattern: RegExp, where: string): string {
  const found = text.match(pattern)?.[1];
  if (found === undefined) throw new Error(`${where}: nothing matches ${pattern}`);
  return found;
}

/** The text before the first `## ` heading of a Markdown file: its title and opening paragraphs. */
const opening = (file: string) => read(file).split(/\n## /)[0] ?? "";

const rpcDocument = openRpcDocument("http://127.0.0.1:3000") as {
  info: { description: string };
  methods: {
    name: string;
    description: string;
    params: { name: string; description: string }[];
    result: { description: string };
  }[];
};

function method(name: string) {
  const found = rpcDocument.methods.find((candidate) => candidate.name === name);
  if (!found) throw new Error(`the OpenRPC document has no method ${name}`);
  return found;
}

function param(methodName: string, paramName: string): string {
  const found = method(methodName).params.find((candidate) => candidate.name === paramName);
  if (!found) throw new Error(`the OpenRPC document's ${methodName} has no param ${paramName}`);
  return found.description;
}

/** The descriptions of every schema titled `title` anywhere in the OpenRPC document (each method repeats them). */
function titledDescriptions(title: string): string[] {
  const found: string[] = [];
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (node !== null && typeof node === "object") {
      const record = node as Record<string, unknown>;
      if (record.title === title) found.push(String(record.description ?? ""));
      Object.values(record).forEach(walk);
    }
  };
  walk(rpcDocument);
  if (found.length === 0) throw new Error(`the OpenRPC document has no schema titled ${title}`);
  return [...new Set(found)];
}

/** The OpenAPI schema of GET chains' `entryPoints` (the served document is generated from it). */
function chainsEntryPointsDescription(): string {
  const data = (listChainsSchema.response[200] as { properties: Record<string, unknown> }).properties.data as {
    items: { properties: { entryPoints: { description?: string } } };
  };
  const description = data.items.properties.entryPoints.description;
  if (description === undefined) throw new Error("GET chains' entryPoints schema has no description");
  return description;
}

const PLACES: readonly Place[] = [
  {
    where: "README.md, the first paragraph's 'on EntryPoint …'",
    versions: SERVED,
    spelling: "prose",
    text: () => captured(opening("README.md"), /on EntryPoint ([^(]+)\(/, "README.md's first paragraph"),
  },
  {
    where: "docs/local-chain.md, 'What `npm start` runs'",
    versions: SERVED,
    spelling: "prose",
    text: () => section("docs/local-chain.md", "## What `npm start` runs"),
  },
  {
    where: "docs/configuration.md, 'Chains file', the table's `entryPoints` row",
    versions: LATER,
    spelling: "prose",
    text: () =>
      captured(section("docs/configuration.md", "## Chains file"), /^(\| `entryPoints` \|.*)$/m, "the entryPoints row"),
  },
  {
    where:
      "docs/configuration.md, 'Later EntryPoint versions', the keys of `entryPoints` ('keyed by EntryPoint version, …')",
    versions: LATER,
    spelling: "quoted",
    // Only the list itself: the same paragraph names "1.0" as a key that stops the start.
    text: () =>
      captured(
        section("docs/configuration.md", "## Later EntryPoint versions"),
        /keyed by EntryPoint version, ([\s\S]*?), each with/,
        "docs/configuration.md, 'Later EntryPoint versions'",
      ),
  },
  {
    where: "docs/sponsorship-rpc.md, the opening paragraph",
    versions: SERVED,
    spelling: "prose",
    text: () => opening("docs/sponsorship-rpc.md"),
  },
  {
    where: "docs/sponsorship-rpc.md, 'Endpoint', the paragraph 'Every method serves …' under the methods table",
    versions: SERVED,
    spelling: "prose",
    text: () =>
      paragraph(section("docs/sponsorship-rpc.md", "## Endpoint"), "Every method serves", "docs/sponsorship-rpc.md"),
  },
  {
    where: "docs/gas-estimation.md, 'Settlement', the EntryPoints whose events are read",
    versions: SERVED,
    spelling: "prose",
    text: () =>
      paragraph(section("docs/gas-estimation.md", "## Settlement"), "UserOperationEvent", "docs/gas-estimation.md"),
  },
  {
    where: "docs/management-api.md, 'Supported chains', the keys of `entryPoints`",
    versions: SERVED,
    spelling: "quoted",
    text: () =>
      captured(
        section("docs/management-api.md", "### Supported chains"),
        /^- `entryPoints`:([\s\S]*?)^- /m,
        "the entryPoints item",
      ),
  },
  {
    where: "docs/management-api.md, 'How the service calls webhooks', the values of `entryPointVersion`",
    versions: LATER,
    spelling: "quoted",
    text: () =>
      captured(
        section("docs/management-api.md", "## How the service calls webhooks"),
        /`entryPointVersion` \(([^)]*)\)/,
        "the entryPointVersion values",
      ),
  },
  {
    where:
      "docs/operations.md, 'Health, readiness and metrics', the `version` label of paymaster_token_charge_failures_total",
    versions: LATER,
    spelling: "list",
    text: () =>
      captured(
        section("docs/operations.md", "### Health, readiness and metrics"),
        /^\| `paymaster_token_charge_failures_total` \| `chain_id`, `version` \(([^)]*)\)/m,
        "the token charge failures metric's row",
      ),
  },
  {
    where: "docs/networks.md, '2. Deploy', the deploy command's `--entry-points`",
    versions: SERVED,
    spelling: "list",
    text: () =>
      captured(
        section("docs/networks.md", "### 2. Deploy"),
        /deploy .*--entry-points ([0-9.,]+)/,
        "the deploy command",
      ),
  },
  {
    where: "the OpenRPC document, info.description (src/rpc/openrpc.ts)",
    versions: SERVED,
    spelling: "prose",
    text: () => rpcDocument.info.description,
  },
  ...["pm_getPaymasterStubData", "pm_getPaymasterData"].flatMap((name): Place[] => [
    {
      where: `the OpenRPC document, ${name}'s param entryPoint (src/schemas/rpc/erc7677Params.ts)`,
      versions: SERVED,
      spelling: "prose",
      text: () => param(name, "entryPoint"),
    },
    {
      where: `the OpenRPC document, ${name}'s param userOperation (src/schemas/rpc/erc7677Params.ts)`,
      versions: LATER,
      spelling: "prose",
      text: () => param(name, "userOperation"),
    },
  ]),
  ...["pm_sponsorUserOperation", "pm_getFeeQuoteOrData", "pm_getFeeQuotesOrData"].flatMap((name): Place[] =>
    ["userOperation", "context"].map((paramName) => ({
      where: `the OpenRPC document, ${name}'s param ${paramName} (src/schemas/rpc/pm_sponsorUserOperation.ts)`,
      versions: LATER,
      spelling: "prose" as const,
      text: () => param(name, paramName),
    })),
  ),
  {
    where: "the OpenRPC document, pm_getFeeQuoteOrData's description (src/schemas/rpc/pm_getFeeQuoteOrData.ts)",
    versions: LATER,
    spelling: "prose",
    text: () => method("pm_getFeeQuoteOrData").description,
  },
  {
    where: "the OpenRPC document, pm_getPaymasterStubData's result (src/schemas/rpc/pm_getPaymasterStubData.ts)",
    versions: LATER,
    spelling: "prose",
    text: () => method("pm_getPaymasterStubData").result.description,
  },
  ...["PartialUserOperationV07", "SponsoredResultV07", "PaymasterStubDataResultV07", "PaymasterDataResultV07"].map(
    (title): Place => ({
      where: `the OpenRPC document, the schema ${title}'s description (src/schemas/rpc/)`,
      versions: LATER,
      spelling: "prose",
      text: () => titledDescriptions(title),
    }),
  ),
  {
    where: "the OpenAPI document, GET chains, the description of `entryPoints` (src/schemas/management/chains.ts)",
    versions: SERVED,
    spelling: "quoted",
    text: chainsEntryPointsDescription,
  },
];

test("the registry serves v0.6 and at least one later version (the places below are checked against it)", () => {
  assert.ok(SERVED.includes("0.6"), `ENTRY_POINT_VERSIONS: ${SERVED.join(", ")}`);
  assert.ok(LATER.length > 0, `ENTRY_POINT_VERSIONS: ${SERVED.join(", ")}`);
});

for (const place of PLACES) {
  test(`${place.where} names every ${place.versions === SERVED ? "" : "later "}EntryPoint version served`, () => {
    const found = place.text();
    for (const text of typeof found === "string" ? [found] : found) {
      const missing = place.versions.filter((version) => !names(text, version, place.spelling));
      assert.deepEqual(
        missing.map((version) => `v${version}`),
        [],
        `${place.where} does not name ${missing.map((version) => `v${version}`).join(", ")}, which the service ` +
          `serves (ENTRY_POINT_VERSIONS: ${SERVED.join(", ")}). What it says now:\n${text.trim()}`,
      );
    }
  });
}

// The table of what the local chain deploys: one row per version, with the EntryPoint address the service uses.
test("docs/local-chain.md, 'What is deployed', has a row 'EntryPoint vX' with its canonical address for every version", () => {
  const table = section("docs/local-chain.md", "## What is deployed");
  const wrong: string[] = [];
  for (const [version, entryPoint] of Object.entries(ENTRY_POINT_VERSIONS)) {
    const row = table.match(new RegExp(`^\\| EntryPoint v${literal(version)} \\| \`(0x[0-9a-fA-F]{40})\` \\|`, "m"));
    if (!row) wrong.push(`v${version}: no row "| EntryPoint v${version} | \`0x…\` |"`);
    else if (row[1]?.toLowerCase() !== entryPoint.canonicalAddress.toLowerCase()) {
      wrong.push(`v${version}: the row says ${row[1]}, the service uses ${entryPoint.canonicalAddress}`);
    }
  }
  assert.deepEqual(wrong, [], `docs/local-chain.md, 'What is deployed':\n${wrong.join("\n")}`);
});

// The spellings themselves, so that a place cannot pass on a near miss.
test("a version is named only in the place's own spelling", () => {
  assert.ok(names("on v0.6, v0.7 and v0.9's", "0.9", "prose"));
  assert.ok(!names("v0.90 and v0.9.1", "0.9", "prose"));
  assert.ok(!names("0.9 and xv0.9", "0.9", "prose"));
  assert.ok(names('"0.7", "0.9"', "0.9", "quoted"));
  assert.ok(!names("v0.9", "0.9", "quoted"));
  assert.ok(names("0.6, 0.7,0.9", "0.9", "list"));
  assert.ok(!names("0.6, 0.90", "0.9", "list"));
});
