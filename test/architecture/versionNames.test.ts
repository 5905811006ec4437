// What a new EntryPoint version touches, held to docs/architecture.md ('Where to add things'): every file of src/ that
// names a version by its number is listed there, either as one a new version touches or as one that names a single
// version's own ways; and the sponsorship's step actions name neither a version nor a mode, since they ask the
// operation's version and the request's kind (src/actions/stepRequest.ts).
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";

const root = path.resolve(import.meta.dirname, "../..");

/** A version's number as code writes it: "0.6" … "0.9" (or a later one) in quotes. */
const VERSION_NAME = /["'`]0\.(?:[6-9]|1\d)["'`]/;

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(root, dir)).flatMap((name) => {
    const relative = `${dir}/${name}`;
    if (statSync(path.join(root, relative)).isDirectory()) return sourceFiles(relative);
    return relative.endsWith(".ts") ? [relative] : [];
  });
}

const namingAVersion = () =>
  sourceFiles("src")
    .filter((file) => VERSION_NAME.test(readFileSync(path.join(root, file), "utf8")))
    .sort();

/** The files a list of docs/architecture.md names, between its two markers. */
function listed(marker: string): string[] {
  const doc = readFileSync(path.join(root, "docs/architecture.md"), "utf8");
  const start = doc.indexOf(`<!-- ${marker} -->`);
  const end = doc.indexOf(`<!-- /${marker} -->`);
  assert.ok(start >= 0 && end > start, `docs/architecture.md has the list ${marker}`);
  return [...doc.slice(start, end).matchAll(/`(src\/[^`]+\.ts)`/g)].map((match) => match[1] as string);
}

test("every file that names a version is one docs/architecture.md lists, and every file listed names one", (t) => {
  const touched = listed("versions-touched");
  const named = listed("versions-named");
  const overlap = touched.filter((file) => named.includes(file));
  assert.deepEqual(overlap, [], "a file is in one list only");
  const found = namingAVersion();
  t.diagnostic(`${found.length} files name a version; a new version touches ${touched.length} of them`);
  assert.deepEqual(found, [...touched, ...named].sort());
});

test("no step action compares a version or a mode: they ask the operation's version and the request's kind", () => {
  const steps = ["sponsor", "stub", "paymasterData", "quote", "parallelSigning", "signOperation"].map(
    (name) => `src/actions/${name}.ts`,
  );
  const MODE = /["'`](?:SPONSORED|ERC20)["'`]|\.mode\s*[!=]==/;
  for (const file of steps) {
    const text = readFileSync(path.join(root, file), "utf8");
    assert.doesNotMatch(text, VERSION_NAME, `${file} names a version`);
    assert.doesNotMatch(text, MODE, `${file} compares a mode`);
  }
});

test("the check finds a version or a mode where one is written", () => {
  assert.match('if (request.version === "0.6")', VERSION_NAME);
  assert.match("versions['0.10']", VERSION_NAME);
  assert.doesNotMatch('"10.6"', VERSION_NAME);
});
