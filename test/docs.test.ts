// The documentation stands alone: nothing in the repository points to material outside it, and every link in the
// README and docs/ (and every "docs/….md, 'Heading'" pointer in a comment) leads to a file and heading that exist.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { test } from "node:test";

const root = resolve(import.meta.dirname, "..");

// Built from pieces so that this file does not match itself.
const OUTSIDE_POINTERS = [`..${"/"}shared`, `decisions ${"§"}`];

function trackedFiles(): string[] {
  const listed = execFileSync("git", ["ls-files", "-z"], { cwd: root, encoding: "utf8" });
  return listed
    .split("\0")
    .filter((path) => path !== "" && !path.split("/").includes("node_modules"))
    .filter((path) => existsSync(join(root, path)));
}

function markdownFiles(): string[] {
  const docs = readdirSync(join(root, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`);
  return ["README.md", ...docs];
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces turned into hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

function headingsOf(path: string): string[] {
  const text = readFileSync(join(root, path), "utf8").replace(/```[\s\S]*?```/g, "");
  return [...text.matchAll(/^#{1,6} (.+)$/gm)].map((match) => (match[1] ?? "").trim());
}

/** Every `[text](target)` outside code blocks, with its line number. */
function linksOf(path: string): { target: string; line: number }[] {
  const lines = readFileSync(join(root, path), "utf8").split("\n");
  const links: { target: string; line: number }[] = [];
  let inCode = false;
  lines.forEach((text, index) => {
    if (text.trimStart().startsWith("```")) inCode = !inCode;
    if (inCode) return;
    for (const match of text.replace(/`[^`]*`/g, "").matchAll(/\]\(([^)\s]+)\)/g)) {
      links.push({ target: match[1] ?? "", line: index + 1 });
    }
  });
  return links;
}

test("no tracked file points outside the repository", () => {
  const offenders: string[] = [];
  for (const path of trackedFiles()) {
    const text = readFileSync(join(root, path), "utf8");
    text.split("\n").forEach((line, index) => {
      for (const pointer of OUTSIDE_POINTERS) {
        if (line.includes(pointer)) offenders.push(`${path}:${index + 1}: ${pointer}`);
      }
    });
  }
  assert.deepEqual(offenders, [], `these lines point outside the repository:\n${offenders.join("\n")}`);
});

test("every relative link in README.md and docs/ leads to an existing file and heading", () => {
  const broken: string[] = [];
  for (const path of markdownFiles()) {
    for (const { target, line } of linksOf(path)) {
      if (/^[a-z]+:/i.test(target)) continue; // https:, mailto: and the like leave the repository on purpose
      const [file = "", anchor] = target.split("#");
      const targetPath = file === "" ? path : relative(root, resolve(root, dirname(path), file));
      if (!existsSync(join(root, targetPath))) {
        broken.push(`${path}:${line}: ${target} (no such file)`);
        continue;
      }
      if (anchor !== undefined && targetPath.endsWith(".md")) {
        if (!headingsOf(targetPath).map(anchorOf).includes(anchor)) {
          broken.push(`${path}:${line}: ${target} (no such heading)`);
        }
      }
    }
  }
  assert.deepEqual(broken, [], `broken links:\n${broken.join("\n")}`);
});

test("every docs/ pointer in the code names an existing file, and its quoted heading exists there", () => {
  const broken: string[] = [];
  const sources = trackedFiles().filter((path) => /^(src|test|bench|scripts|contracts)\/.*\.(ts|sol)$/.test(path));
  for (const path of sources) {
    // Comments wrap, so read each file as one line.
    const text = readFileSync(join(root, path), "utf8").replace(/\n\s*(\/\/|\*)\s*/g, " ");
    for (const match of text.matchAll(/docs\/([a-z0-9-]+\.md)((?:,? '[^']+')*)/g)) {
      const doc = `docs/${match[1]}`;
      if (!existsSync(join(root, doc))) {
        broken.push(`${path}: ${doc} (no such file)`);
        continue;
      }
      const headings = headingsOf(doc);
      for (const quoted of (match[2] ?? "").matchAll(/'([^']+)'/g)) {
        if (!headings.includes(quoted[1] ?? "")) broken.push(`${path}: ${doc}, '${quoted[1]}' (no such heading)`);
      }
    }
  }
  assert.deepEqual(broken, [], `broken pointers:\n${broken.join("\n")}`);
});

test("the anchor rule matches GitHub's for the headings used here", () => {
  assert.equal(
    anchorOf("Verifying paymasterAndData layout (276 bytes)"),
    "verifying-paymasteranddata-layout-276-bytes",
  );
  assert.equal(anchorOf("`npm run demo`"), "npm-run-demo");
  assert.equal(anchorOf("ERC-7677"), "erc-7677");
});
