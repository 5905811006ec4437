// The direction of imports between the service's layers (docs/testing.md, 'Import directions'): value imports go
// down the LAYERS, the development chain is imported only by the starts, no two folders import each other, and each
// endpoint makes only its own family of errors (read from src/errors.ts). Every src file's import statements are read
// with TypeScript's own parser; a broken rule fails with the file, the import and the rule, a cycle with its imports.
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

/** The error classes and helpers of src/errors.ts by family: what extends (or makes) ApiError, and RpcError. */
interface ErrorFamilies {
  /** The management API's answers: made by the management side only. */
  api: ReadonlySet<string>;
  /** The JSON-RPC endpoint's answers: made by the RPC side only. */
  rpc: ReadonlySet<string>;
}

/**
 * Reads the exported classes and functions of an errors module and sorts them by the root they come from: a class by
 * what it extends (a class, or a function that returns a class, such as `fixedError(…)`), a function by the error it
 * makes (`new ApiError(…)`). So a new error class is covered by the rules without a change here.
 */
function errorFamilies(source: string): ErrorFamilies {
  const tree = ts.createSourceFile("errors.ts", source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const declared = new Map<string, ts.Node>();
  const exported = new Set<string>();
  const isExported = (node: ts.Node) =>
    ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
  for (const statement of tree.statements) {
    if (ts.isClassDeclaration(statement) && statement.name) {
      declared.set(statement.name.text, statement);
      if (isExported(statement)) exported.add(statement.name.text);
    } else if (ts.isFunctionDeclaration(statement) && statement.name) {
      declared.set(statement.name.text, statement);
      if (isExported(statement)) exported.add(statement.name.text);
    } else if (ts.isVariableStatement(statement)) {
      for (const declaration of statement.declarationList.declarations) {
        if (!ts.isIdentifier(declaration.name) || !declaration.initializer) continue;
        declared.set(declaration.name.text, declaration.initializer);
        if (isExported(statement)) exported.add(declaration.name.text);
      }
    }
  }
  const ROOTS = ["ApiError", "RpcError"] as const;
  const rootOf = (name: string, seen: Set<string>): string | undefined => {
    if ((ROOTS as readonly string[]).includes(name)) return name;
    if (seen.has(name)) return undefined;
    seen.add(name);
    const node = declared.get(name);
    return node ? rootOfNode(node, seen) : undefined;
  };
  // A class: its base; a function or arrow: the first class or `new` in its body.
  const rootOfNode = (node: ts.Node, seen: Set<string>): string | undefined => {
    if (ts.isIdentifier(node)) return rootOf(node.text, seen);
    if (ts.isClassLike(node)) {
      const base = node.heritageClauses?.find((clause) => clause.token === ts.SyntaxKind.ExtendsKeyword)?.types[0];
      return base ? rootOfNode(base.expression, seen) : undefined;
    }
    if (ts.isCallExpression(node) || ts.isNewExpression(node)) return rootOfNode(node.expression, seen);
    let found: string | undefined;
    const visit = (child: ts.Node) => {
      if (found !== undefined) return;
      if (ts.isClassLike(child) || ts.isNewExpression(child)) found = rootOfNode(child, seen);
      else ts.forEachChild(child, visit);
    };
    ts.forEachChild(node, visit);
    return found;
  };
  const family = (root: string) => new Set([...exported].filter((name) => rootOf(name, new Set()) === root));
  return { api: family("ApiError"), rpc: family("RpcError") };
}

const ERRORS = errorFamilies(readFileSync(path.join(ROOT, "src/errors.ts"), "utf8"));

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
  if (target === "src/errors.ts") return edge.names.every((name) => /Error$/.test(name) && !ERRORS.api.has(name));
  return false;
}

/**
 * The layers, top first: a value import goes to its own layer or one below (a type-only import may go anywhere: it
 * leaves nothing at run time). src/sponsorship/rules/ is part of the engine (its own rule below keeps the direction
 * inside it); entryPoints/ and paymasters/ are the contracts' bindings, pure code that every layer talking about the
 * EntryPoint uses, so they sit below the services. src/config.ts reads the chains file through its schemas, so it
 * sits above src/schemas/.
 */
const LAYERS: { name: string; members: string[] }[] = [
  { name: "starts", members: ["src/main.ts", "src/cli/", "src/devChain/"] },
  {
    name: "app",
    members: [
      "src/app.ts",
      "src/httpServer.ts",
      "src/unrouted.ts",
      "src/credentialThrottle.ts",
      "src/appParts.ts",
      "src/rpcEndpoint.ts",
    ],
  },
  { name: "endpoints", members: ["src/http/", "src/rpc/"] },
  { name: "use cases", members: ["src/actions/"] },
  { name: "engine", members: ["src/sponsorship/"] },
  {
    name: "services",
    members: [
      "src/chain/",
      "src/signer/",
      "src/gasEstimation/",
      "src/tokens/",
      "src/settlement/",
      "src/alerts/",
      "src/events/",
      "src/webhooks/",
      "src/metrics/",
      "src/logging/",
    ],
  },
  { name: "bindings", members: ["src/bindings/", "src/abi/"] },
  { name: "storage", members: ["src/storage/"] },
  { name: "configuration", members: ["src/config.ts", "src/keyFile.ts", "src/context.ts", "src/runtimeSupport.ts"] },
  { name: "schemas", members: ["src/schemas/"] },
  { name: "errors", members: ["src/errors.ts"] },
];

/** The layer of a src file (the longest member that holds it: entryPoints/ before sponsorship/); undefined outside. */
function layerOf(file: string): number | undefined {
  let best: { layer: number; length: number } | undefined;
  LAYERS.forEach(({ members }, layer) => {
    for (const member of members) {
      const holds = member.endsWith("/") ? file.startsWith(member) : file === member;
      if (holds && (!best || member.length > best.length)) best = { layer, length: member.length };
    }
  });
  return best?.layer;
}

const isValueImport = (edge: ImportEdge) => !edge.typeOnly;

/** Files of the engine that import a rule: what runs the rules, which the rules themselves never import. */
function ruleRunners(edges: readonly ImportEdge[]): Set<string> {
  return new Set(
    edges
      .filter(
        (edge) => /^src\/sponsorship\/[^/]+\.ts$/.test(edge.from) && inside("src/sponsorship/rules/")(edge.target),
      )
      .map((edge) => edge.from),
  );
}

function rulesFor(edges: readonly ImportEdge[]): Rule[] {
  const runners = ruleRunners(edges);
  return [
    {
      name: "a value import goes to its own layer or a lower one (LAYERS)",
      appliesTo: (file) => layerOf(file) !== undefined,
      refuses: (edge) => {
        if (!isValueImport(edge) || edge.target === undefined) return false;
        const to = layerOf(edge.target);
        return to !== undefined && to < (layerOf(edge.from) as number);
      },
    },
    {
      name: "src/devChain/ is imported by value only by src/main.ts, src/cli/ and itself",
      appliesTo: (file) => file !== "src/main.ts" && !inside("src/cli/", "src/devChain/")(file),
      refuses: (edge) => isValueImport(edge) && inside("src/devChain/")(edge.target),
    },
    {
      name: "src/sponsorship/rules/ never imports by value what runs the rules (an engine file that imports a rule)",
      appliesTo: inside("src/sponsorship/rules/"),
      refuses: (edge) => isValueImport(edge) && edge.target !== undefined && runners.has(edge.target),
    },
    {
      name: "the bindings (src/bindings/, src/abi/) import only libraries, each other and the contracts' artifacts",
      appliesTo: inside("src/bindings/", "src/abi/"),
      refuses: (edge) =>
        isValueImport(edge) &&
        edge.target?.startsWith("src/") === true &&
        !inside("src/bindings/", "src/abi/")(edge.target),
    },
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
      name: "only the management side (src/http/, src/actions/, src/schemas/, src/app.ts) makes its errors (the ApiError family)",
      appliesTo: (file) => !inside("src/http/", "src/actions/", "src/schemas/")(file) && file !== "src/app.ts",
      refuses: (edge) => edge.target === "src/errors.ts" && edge.names.some((name) => ERRORS.api.has(name)),
    },
    {
      name: "only the RPC side (src/rpc/, src/actions/, src/tokens/, src/app.ts) makes JSON-RPC errors (the RpcError family)",
      appliesTo: (file) => !inside("src/rpc/", "src/actions/", "src/tokens/")(file) && file !== "src/app.ts",
      refuses: (edge) =>
        isValueImport(edge) && edge.target === "src/errors.ts" && edge.names.some((name) => ERRORS.rpc.has(name)),
    },
  ];
}

/**
 * The folder a file counts in for the cycle check: its top folder under src/, as a plain directory (every subfolder
 * with it: rules/ with the engine, entryPoints/ and paymasters/ with the bindings, schemas/'s with src/schemas/), or
 * the file itself at the top of src/.
 */
function folderOf(file: string): string {
  const parts = file.split("/");
  if (parts.length === 2) return file;
  return `src/${parts[1]}/`;
}

/** Node → the nodes it imports by value, each with one import that makes the edge (to name it in a failure). */
function valueGraph(
  edges: readonly ImportEdge[],
  nodeOf: (file: string) => string,
): Map<string, Map<string, ImportEdge>> {
  const graph = new Map<string, Map<string, ImportEdge>>();
  for (const edge of edges) {
    if (!isValueImport(edge) || edge.target === undefined || !edge.target.startsWith("src/")) continue;
    const from = nodeOf(edge.from);
    const to = nodeOf(edge.target);
    if (from === to) continue;
    const out = graph.get(from) ?? new Map<string, ImportEdge>();
    if (!out.has(to)) out.set(to, edge);
    graph.set(from, out);
  }
  return graph;
}

/** Every cycle of the graph found by a depth-first walk, each as its nodes in order and the imports that close it. */
function cyclesOf(graph: Map<string, Map<string, ImportEdge>>): string[] {
  const cycles: string[] = [];
  const done = new Set<string>();
  const onPath: string[] = [];
  const walk = (node: string) => {
    onPath.push(node);
    for (const next of graph.get(node)?.keys() ?? []) {
      const at = onPath.indexOf(next);
      if (at >= 0) {
        const loop = [...onPath.slice(at), next];
        const via = loop.slice(0, -1).map((from, i) => graph.get(from)?.get(loop[i + 1] as string) as ImportEdge);
        cycles.push(
          `${loop.join(" → ")} (${via.map((e) => `${e.from}:${e.line} imports "${e.specifier}"`).join("; ")})`,
        );
      } else if (!done.has(next)) {
        walk(next);
      }
    }
    onPath.pop();
    done.add(node);
  };
  for (const node of [...graph.keys()].sort()) if (!done.has(node)) walk(node);
  return cycles;
}

/** Cycles between the folders of src/ as plain directories. */
const folderCycles = (edges: readonly ImportEdge[]) => cyclesOf(valueGraph(edges, folderOf));
/** Cycles between single files, which a folder check cannot see inside one folder. */
const fileCycles = (edges: readonly ImportEdge[]) => cyclesOf(valueGraph(edges, (file) => file));

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

/** The rules break `edges`; the rule runners are those of the service's own files (RULES) unless told. */
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
const THROTTLE =
  "the wrong-credential throttle serves both endpoints but lives in src/http/: to move to a shared module";
const CLOSING =
  "while the app closes, one hook answers both endpoints (src/http/closing.ts), the RPC path with a JSON-RPC error; " +
  "to move with the throttle to a module both endpoints share";
const ALLOWED: readonly Allowed[] = [
  { from: "src/rpc/server.ts", target: "src/http/failureThrottle.ts", reason: THROTTLE },
  { from: "src/http/failureThrottle.ts", target: "src/errors.ts", reason: THROTTLE },
  { from: "src/http/closing.ts", target: "src/errors.ts", reason: CLOSING },
];

function sourceFiles(folder: string): string[] {
  return readdirSync(path.join(ROOT, folder), { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(".ts"))
    .map((name) => `${folder}/${name.split(path.sep).join("/")}`)
    .sort();
}

const srcEdges = sourceFiles("src").flatMap((file) => importsOf(file, readFileSync(path.join(ROOT, file), "utf8")));
const RULES = rulesFor(srcEdges);

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
    ...importsOf("src/webhooks/extra.ts", 'import { PolicyNotFoundError } from "../errors";', () => false),
    ...importsOf("src/storage/extra.ts", 'import { invalidParams } from "../errors";', () => false),
    ...importsOf("src/chain/extra.ts", 'import { localChain } from "../devChain/localChain";', () => false),
    ...importsOf("src/sponsorship/rules/extra.ts", 'import { CHEAP_RULES } from "../ruleList";', () => false),
    ...importsOf(
      "src/bindings/entryPoints/extra.ts",
      'import { chainClient } from "../../chain/chainClient";',
      () => false,
    ),
  ];
  const broken = violations(synthetic)
    .filter((violation) => !isAllowed(violation, ALLOWED))
    .map(explain);
  assert.deepEqual(broken, [
    'src/storage/policies.ts:1 imports "../chain/settlement" (startSettlement): breaks "a value import goes to its own layer or a lower one (LAYERS)"',
    'src/storage/policies.ts:1 imports "../chain/settlement" (startSettlement): breaks "src/storage/ imports only libraries, other storage files, src/schemas/, src/config.ts types and error classes"',
    'src/storage/policies.ts:2 imports "../errors" (badRequest): breaks "src/storage/ imports only libraries, other storage files, src/schemas/, src/config.ts types and error classes"',
    'src/storage/policies.ts:2 imports "../errors" (badRequest): breaks "only the management side (src/http/, src/actions/, src/schemas/, src/app.ts) makes its errors (the ApiError family)"',
    'src/schemas/config/extra.ts:1 imports "../../config" (loadConfig): breaks "a value import goes to its own layer or a lower one (LAYERS)"',
    'src/schemas/config/extra.ts:1 imports "../../config" (loadConfig): breaks "src/schemas/ imports only libraries, other schemas and src/errors.ts (the fixed texts and the 400 it words)"',
    'src/tokens/quoteExtra.ts:1 imports "../rpc/rpcError" (rpcError): breaks "a value import goes to its own layer or a lower one (LAYERS)"',
    'src/tokens/quoteExtra.ts:1 imports "../rpc/rpcError" (rpcError): breaks "src/sponsorship/, src/chain/ and src/tokens/ import nothing from src/http/ or src/rpc/"',
    'src/http/extra.ts:1 imports "../rpc/server" (handleRpc): breaks "src/http/ imports nothing from src/rpc/"',
    'src/rpc/extra.ts:1 imports "../http/auth" (apiKeyOf): breaks "src/rpc/ imports nothing from src/http/"',
    'src/webhooks/extra.ts:1 imports "../errors" (PolicyNotFoundError): breaks "only the management side (src/http/, src/actions/, src/schemas/, src/app.ts) makes its errors (the ApiError family)"',
    'src/storage/extra.ts:1 imports "../errors" (invalidParams): breaks "src/storage/ imports only libraries, other storage files, src/schemas/, src/config.ts types and error classes"',
    'src/storage/extra.ts:1 imports "../errors" (invalidParams): breaks "only the RPC side (src/rpc/, src/actions/, src/tokens/, src/app.ts) makes JSON-RPC errors (the RpcError family)"',
    'src/chain/extra.ts:1 imports "../devChain/localChain" (localChain): breaks "a value import goes to its own layer or a lower one (LAYERS)"',
    'src/chain/extra.ts:1 imports "../devChain/localChain" (localChain): breaks "src/devChain/ is imported by value only by src/main.ts, src/cli/ and itself"',
    'src/sponsorship/rules/extra.ts:1 imports "../ruleList" (CHEAP_RULES): breaks "src/sponsorship/rules/ never imports by value what runs the rules (an engine file that imports a rule)"',
    'src/bindings/entryPoints/extra.ts:1 imports "../../chain/chainClient" (chainClient): breaks "a value import goes to its own layer or a lower one (LAYERS)"',
    'src/bindings/entryPoints/extra.ts:1 imports "../../chain/chainClient" (chainClient): breaks "the bindings (src/bindings/, src/abi/) import only libraries, each other and the contracts\' artifacts"',
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
    ...importsOf("src/rpc/extra.ts", 'import { RpcError } from "../errors";', () => false),
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

test("no cycle between folders through value imports (type-only imports do not count)", () => {
  assert.deepEqual(folderCycles(srcEdges), []);
});

test("no cycle between files through value imports", () => {
  assert.deepEqual(fileCycles(srcEdges), []);
});

test("a cycle between two files of one folder is named; a cycle between subfolders of one folder is one between plain directories", () => {
  const inOneFolder = [
    ...importsOf("src/rpc/a.ts", 'import { b } from "./b";', () => false),
    ...importsOf("src/rpc/b.ts", 'import { a } from "./a";', () => false),
  ];
  assert.deepEqual(folderCycles(inOneFolder), []);
  assert.deepEqual(fileCycles(inOneFolder), [
    'src/rpc/a.ts → src/rpc/b.ts → src/rpc/a.ts (src/rpc/a.ts:1 imports "./b"; src/rpc/b.ts:1 imports "./a")',
  ]);
  const acrossFolders = [
    ...importsOf("src/bindings/x.ts", 'import { y } from "../chain/y";', () => false),
    ...importsOf("src/chain/y.ts", 'import { x } from "../bindings/entryPoints/x";', () => false),
  ];
  assert.equal(folderCycles(acrossFolders).length, 1);
  assert.match(folderCycles(acrossFolders)[0] as string, /^src\/bindings\/ → src\/chain\/ → src\/bindings\//);
});

test("a cycle between folders is named with the imports that close it; a type-only import makes none", () => {
  const edges = [
    ...importsOf("src/chain/price.ts", 'import { RequestPrice } from "../sponsorship/usdAmount";', () => false),
    ...importsOf("src/sponsorship/usdAmount.ts", 'import { chainClient } from "../chain/chainClient";', () => false),
    ...importsOf("src/storage/x.ts", 'import type { Rule } from "../sponsorship/rule";', () => false),
    ...importsOf("src/sponsorship/rule.ts", 'import { openStorage } from "../storage/open";', () => false),
  ];
  assert.deepEqual(folderCycles(edges), [
    'src/chain/ → src/sponsorship/ → src/chain/ (src/chain/price.ts:1 imports "../sponsorship/usdAmount"; ' +
      'src/sponsorship/usdAmount.ts:1 imports "../chain/chainClient")',
  ]);
});

test("the error families come from src/errors.ts itself: a new class is covered without a change here", () => {
  assert.ok(ERRORS.api.has("ApiError") && ERRORS.api.has("badRequest") && ERRORS.api.has("PolicyNotFoundError"));
  assert.ok(ERRORS.rpc.has("RpcError") && ERRORS.rpc.has("invalidParams"));
  assert.ok(!ERRORS.api.has("RpcError") && !ERRORS.rpc.has("ApiError") && !ERRORS.api.has("messages"));
  const source = [
    "export abstract class PaymasterError extends Error {}",
    "export class ApiError extends PaymasterError {}",
    "export class RpcError extends PaymasterError {}",
    "const fixedError = (status: number) => class extends ApiError {};",
    "export class QuotaExceededError extends fixedError(429) {}",
    "export class LateError extends QuotaExceededError {}",
    "export const tooMany = (message: string) => new RpcError(message);",
    "export function refused(message: string) { return new QuotaExceededError(message); }",
    "export const CODE = -32003;",
  ].join("\n");
  const families = errorFamilies(source);
  assert.deepEqual([...families.api].sort(), ["ApiError", "LateError", "QuotaExceededError", "refused"]);
  assert.deepEqual([...families.rpc].sort(), ["RpcError", "tooMany"]);
});
