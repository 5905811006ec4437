import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { loadSignerKey } from "../../src/signer/signerKey";

const dir = mkdtempSync(path.join(tmpdir(), "paymaster-key-"));

test("a missing key file is made once, owner-only, and read back the same", () => {
  const file = path.join(dir, "made.key");
  const key = loadSignerKey({ kind: "file", path: file, createIfMissing: true });
  assert.match(key, /^0x[0-9a-f]{64}$/);
  assert.equal(statSync(file).mode & 0o777, 0o600);
  assert.equal(loadSignerKey({ kind: "file", path: file, createIfMissing: true }), key);
  assert.equal(readFileSync(file, "utf8").trim(), key);
});

test("refusals name the file and never the key", () => {
  const open = path.join(dir, "open.key");
  const secret = `0x${"cd".repeat(32)}`;
  writeFileSync(open, secret);
  chmodSync(open, 0o644);
  assert.throws(
    () => loadSignerKey({ kind: "file", path: open, createIfMissing: false }),
    (error: Error) => /readable by its owner only/.test(error.message) && !error.message.includes("cdcd"),
  );
  const bad = path.join(dir, "bad.key");
  writeFileSync(bad, "0xnot-a-key", { mode: 0o600 });
  assert.throws(
    () => loadSignerKey({ kind: "file", path: bad, createIfMissing: false }),
    /must hold 0x and 64 hex digits/,
  );
  assert.throws(
    () => loadSignerKey({ kind: "file", path: path.join(dir, "absent.key"), createIfMissing: false }),
    /set SIGNER_PRIVATE_KEY or SIGNER_KEY_FILE/,
  );
});
