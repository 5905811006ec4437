// The direction of imports between the service's layers (docs/testing.md, 'Import directions'): storage at the bottom,
// the schemas apart, the sponsorship, chain and token code below the two endpoints, and the management API (src/http/)
// and the JSON-RPC endpoint (src/rpc/) apart from each other. Every src file's import statements are read with
// TypeScript's own parser; a broken rule fails with the file, the import and the rule.
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import ts from "typescript";

const ROOT = path.resolve(import.meta.dirname, "../..");

/** One import or re-export of a file: what it names, what it reaches (a project file, or a library when undefined). */
interface ImportEdge {
  from: string;
  specifier: string;
  /** Project-relative path of the imported file; undefined for a library or a node builtin. */
  target: string | undefined;
  /** The imported bindings: names, `default`, or `*` for a namespace, a re-export of all, or a dynamic import. */
  names: string[];
  typeOnly: boolean;
  line: number;
}

/** Every import, re-export and dynamic import() of one file, from its syntax tree (comments and strings are not code). */
function importsOf(file: string, source: string, exists: (file: string) => boolean = fileExists): ImportEdge[] {
  const tree = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const edges: ImportEdge[] = [];
  const add = (node: ts.Node, specifier: string, names: string[], typeOnly: boolean) => {
    const line = tree.getLineAndCharacterOfPosition(node.getStart(tree)).line + 1;
    edges.push({ from: file, specifier, target: resolveImport(file, specifier, exists), names, typeOnly, line });
  };
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const names: string[] = [];
      if (clause?.name) names.push("default");
      const bindings = clause?.namedBindings;
      if (bindings && ts.isNamespaceImport(bindings)) names.push("*");
      if (bindings && ts.isNamedImports(bindings)) {
        for (const element of bindings.elements) names.push((element.propertyName ?? element.name).text);
      }
      const everyNameTypeOnly =
        bindings !== undefined &&
        ts.isNamedImports(bindings) &&
        clause?.name === undefined &&
        bindings.elements.length > 0 &&
        bindings.elements.every((element) => element.isTypeOnly);
      add(node, node.moduleSpecifier.text, names, clause?.isTypeOnly === true || everyNameTypeOnly);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.exportClause;
      const names =
        clause && ts.isNamedExports(clause)
          ? clause.elements.map((element) => (element.propertyName ?? element.name).text)
          : ["*"];
      add(node, node.moduleSpecifier.text, names, node.isTypeOnly);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      add(node, node.arguments[0].text, ["*"], false);
    }
    ts.forEachChild(node, visit);
  };
  visit(tree);
  return edges;
}

function fileExists(file: string): boolean {
  try {
    return statSync(path.join(ROOT, file)).isFile();
  } catch {
    return false;
  }
}

/** `../errors` from src/storage/policies.ts is src/errors.ts; a bare specifier (a library, node:fs) is no project file. */
function resolveImport(from: string, specifier: string, exists: (file: string) => boolean): string | undefined {
  if (!specifier.startsWith(".")) return undefined;
  const base = path.posix.join(path.posix.dirname(from), specifier);
  return [base, `${base}.ts`, `${base}/index.ts`].find(exists) ?? `${base}.ts`;
}

/** The management API's answers: made by src/http/ (and src/app.ts), never by the layers below it. */
const API_ERRORS = new Set(["ApiError", "badRequest", "unauthorized", "notFound"]);

const inside =
  (...folders: string[]) =>
  (file: string | undefined) =>
    file !== undefined && folders.some((folder) => file.startsWith(folder));

interface Rule {
  name: string;
  /** Whether the rule looks at imports made by this file. */
  appliesTo: (file: string) => boolean;
  refuses: (edge: ImportEdge) => boolean;
}

/** What storage may import: libraries, storage, schemas, the types of src/config.ts and error classes. */
function storageMayImport(edge: ImportEdge): boolean {
  const target = edge.target;
  if (target === undefined || inside("src/storage/", "src/schemas/")(target)) return true;
  if (target === "src/config.ts") return edge.typeOnly;
  if (target === "src/errors.ts") return edge.names.every((name) => /Error$/.test(name) && !API_ERRORS.has(name));
  return false;
}

const RULES: Rule[] = [
  {
    name: "src/storage/ imports only libraries, other storage files, src/schemas/, src/config.ts types and error classes",
    appliesTo: inside("src/storage/"),
    refuses: (edge) => !storageMayImport(edge),
  },
  {
    name: "src/schemas/ imports only libraries, other schemas and src/errors.ts (the fixed texts and the 400 it words)",
    appliesTo: inside("src/schemas/"),
    refuses: (edge) =>
      edge.target !== undefined && !inside("src/schemas/")(edge.target) && edge.target !== "src/errors.ts",
  },
  {
    name: "src/sponsorship/, src/chain/ and src/tokens/ import nothing from src/http/ or src/rpc/",
    appliesTo: inside("src/sponsorship/", "src/chain/", "src/tokens/"),
    refuses: (edge) => inside("src/http/", "src/rpc/")(edge.target),
  },
  {
    name: "src/http/ imports nothing from src/rpc/",
    appliesTo: inside("src/http/"),
    refuses: (edge) => inside("src/rpc/")(edge.target),
  },
  {
    name: "src/rpc/ imports nothing from src/http/",
    appliesTo: inside("src/rpc/"),
    refuses: (edge) => inside("src/http/")(edge.target),
  },
  {
    name: "only the management side (src/http/, src/actions/, src/schemas/, src/app.ts) makes its errors (ApiError, …)",
    appliesTo: (file) => !inside("src/http/", "src/actions/", "src/schemas/")(file) && file !== "src/app.ts",
    refuses: (edge) => edge.target === "src/errors.ts" && edge.names.some((name) => API_ERRORS.has(name)),
  },
];

interface Violation {
  edge: ImportEdge;
  rule: string;
}

/** A known violation, tolerated until the change that removes it lands; the reason says which. */
interface Allowed {
  from: string;
  target: string;
  reason: string;
}

function violations(edges: ImportEdge[], rules: Rule[] = RULES): Violation[] {
  return edges.flatMap((edge) =>
    rules.filter((rule) => rule.appliesTo(edge.from) && rule.refuses(edge)).map((rule) => ({ edge, rule: rule.name })),
  );
}

const isAllowed = (violation: Violation, allowed: readonly Allowed[]) =>
  allowed.some((entry) => entry.from === violation.edge.from && entry.target === violation.edge.target);

const explain = ({ edge, rule }: Violation) =>
  `${edge.from}:${edge.line} imports "${edge.specifier}" (${edge.names.join(", ")}): breaks "${rule}"`;

// Today's violations of the target layering, each with why it is still here. Remove an entry when its import goes:
// the test fails on an entry that no longer matches anything, so the list only shrinks.
const ALLOWED: readonly Allowed[] = [
  {
    from: "src/rpc/server.ts",
    target: "src/http/failureThrottle.ts",
    reason: "the wrong-credential throttle serves both endpoints but lives in src/http/: to move to a shared module",
  },
];

function sourceFiles(folder: string): string[] {
  return readdirSync(path.join(ROOT, folder), { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(".ts"))
    .map((name) => `${folder}/${name.split(path.sep).join("/")}`)
    .sort();
}

const srcEdges = sourceFiles("src").flatMap((file) => importsOf(file, readFileSync(path.join(ROOT, file), "utf8")));

test("every src file keeps to the import directions (the allow-list aside)", () => {
  assert.ok(srcEdges.length > 300, `the parser found the imports (${srcEdges.length})`);
  const broken = violations(srcEdges).filter((violation) => !isAllowed(violation, ALLOWED));
  assert.deepEqual(broken.map(explain), []);
});

test("every allow-list entry is still needed, so the list shrinks as the moves land", () => {
  const found = violations(srcEdges);
  for (const entry of ALLOWED) {
    assert.ok(
      found.some((violation) => violation.edge.from === entry.from && violation.edge.target === entry.target),
      `${entry.from} no longer imports ${entry.target}: remove its allow-list entry (${entry.reason})`,
    );
  }
});

test("the parser finds every form of import, with names and type-only flags, and nothing in comments or strings", () => {
  const source = [
    'import fs from "node:fs";',
    'import * as path from "node:path";',
    "import {",
    "  badRequest,",
    "  messages as texts,",
    '} from "../errors";',
    'import type { Config } from "../config";',
    'import { type Database } from "./database";',
    'import "./sideEffect";',
    'export { openStorage } from "./open";',
    'export * from "../schemas/primitives";',
    'export type { ChainConfig } from "../config";',
    'const chain = await import("../chain/localChain");',
    '// import { nothing } from "../http/admin";',
    "const text = 'import { nothing } from \"../rpc/server\"';",
  ].join("\n");
  const edges = importsOf("src/storage/example.ts", source, () => false);
  assert.deepEqual(
    edges.map(({ specifier, target, names, typeOnly, line }) => [specifier, target, names.join(","), typeOnly, line]),
    [
      ["node:fs", undefined, "default", false, 1],
      ["node:path", undefined, "*", false, 2],
      ["../errors", "src/errors.ts", "badRequest,messages", false, 3],
      ["../config", "src/config.ts", "Config", true, 7],
      ["./database", "src/storage/database.ts", "Database", true, 8],
      ["./sideEffect", "src/storage/sideEffect.ts", "", false, 9],
      ["./open", "src/storage/open.ts", "openStorage", false, 10],
      ["../schemas/primitives", "src/schemas/primitives.ts", "*", false, 11],
      ["../config", "src/config.ts", "ChainConfig", true, 12],
      ["../chain/localChain", "src/chain/localChain.ts", "*", false, 13],
    ],
  );
});

test("a new violation fails with its file and import, whatever the allow-list holds for other imports", () => {
  const synthetic = [
    ...importsOf(
      "src/storage/policies.ts",
      'import { startSettlement } from "../chain/settlement";\nimport { badRequest } from "../errors";',
      () => false,
    ),
    ...importsOf("src/schemas/config/extra.ts", 'import { loadConfig } from "../../config";', () => false),
    ...importsOf("src/tokens/quoteExtra.ts", 'import { rpcError } from "../rpc/rpcError";', () => false),
    ...importsOf("src/http/extra.ts", 'import { handleRpc } from "../rpc/server";', () => false),
    ...importsOf("src/rpc/extra.ts", 'import { apiKeyOf } from "../http/auth";', () => false),
    ...importsOf("src/webhooks/extra.ts", 'import { notFound } from "../errors";', () => false),
  ];
  const broken = violations(synthetic)
    .filter((violation) => !isAllowed(violation, ALLOWED))
    .map(explain);
  assert.deepEqual(broken, [
    'src/storage/policies.ts:1 imports "../chain/settlement" (startSettlement): breaks "src/storage/ imports only libraries, other storage files, src/schemas/, src/config.ts types and error classes"',
    'src/storage/policies.ts:2 imports "../errors" (badRequest): breaks "src/storage/ imports only libraries, other storage files, src/schemas/, src/config.ts types and error classes"',
    'src/storage/policies.ts:2 imports "../errors" (badRequest): breaks "only the management side (src/http/, src/actions/, src/schemas/, src/app.ts) makes its errors (ApiError, …)"',
    'src/schemas/config/extra.ts:1 imports "../../config" (loadConfig): breaks "src/schemas/ imports only libraries, other schemas and src/errors.ts (the fixed texts and the 400 it words)"',
    'src/tokens/quoteExtra.ts:1 imports "../rpc/rpcError" (rpcError): breaks "src/sponsorship/, src/chain/ and src/tokens/ import nothing from src/http/ or src/rpc/"',
    'src/http/extra.ts:1 imports "../rpc/server" (handleRpc): breaks "src/http/ imports nothing from src/rpc/"',
    'src/rpc/extra.ts:1 imports "../http/auth" (apiKeyOf): breaks "src/rpc/ imports nothing from src/http/"',
    'src/webhooks/extra.ts:1 imports "../errors" (notFound): breaks "only the management side (src/http/, src/actions/, src/schemas/, src/app.ts) makes its errors (ApiError, …)"',
  ]);
  assert.equal(violations(synthetic).length, broken.length, "nothing on the allow-list excuses these");
});

test("what the rules let through: libraries, storage's own files, config types, error classes, JSON-RPC errors", () => {
  const fine = [
    ...importsOf(
      "src/storage/example.ts",
      [
        'import { randomUUID } from "node:crypto";',
        'import pg from "pg";',
        'import { type Database } from "./database";',
        'import type { Config } from "../config";',
        'import { PaymasterError } from "../errors";',
        'import { Address } from "../schemas/primitives";',
      ].join("\n"),
      () => false,
    ),
    ...importsOf("src/http/failureThrottle.ts", 'import { RpcError } from "../errors";', () => false),
    ...importsOf("src/tokens/erc20Terms.ts", 'import { invalidParams } from "../errors";', () => false),
    ...importsOf("src/http/paymasters.ts", 'import { badRequest } from "../errors";', () => false),
    ...importsOf(
      "src/schemas/config/x.ts",
      'import Type from "typebox";\nimport { A } from "../primitives";',
      () => false,
    ),
  ];
  assert.deepEqual(violations(fine).map(explain), []);
  // The same config import, for a value instead of a type, is refused.
  const value = importsOf("src/storage/example.ts", 'import { loadConfig } from "../config";', () => false);
  assert.equal(violations(value).length, 1);
});
