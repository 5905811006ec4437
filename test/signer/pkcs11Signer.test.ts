// The PKCS#11 signer against a real module: SoftHSM2, with a token and a non-extractable secp256k1 key made by this
// test. Checks that what the token signs recovers to the address of the token's own public key, thousands of times,
// that sessions are kept and reused, that a module dropping every session (which also logs the application out) costs
// one retry and no failed signature, and that each wrong setting stops the opening with a message naming it.
import assert from "node:assert/strict";
import { chmodSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { after, before, test } from "node:test";
import { format, inspect } from "node:util";
import type * as Pkcs11 from "pkcs11js";
import { bytesToHex, type Hex, hexToBytes, keccak256, recoverMessageAddress, toHex } from "viem";
import { publicKeyToAddress } from "viem/accounts";
import { ConfigError } from "../../src/config";
import { Pkcs11Signer } from "../../src/signer/pkcs11Signer";
import { loadNative, personalSignDigest, SECP256K1_ORDER } from "../../src/signer/signer";
import { createSoftHsm, type SoftHsm } from "../helpers/softHsm";

const TOKEN = { label: "paymaster", pin: "4711-test" };
const KEY = "verifying-signer";
let hsm: SoftHsm;

before(() => {
  hsm = createSoftHsm();
  hsm.useInThisProcess();
  hsm.addToken(TOKEN.label, TOKEN.pin);
  hsm.addKey(TOKEN, KEY);
  hsm.addKey(TOKEN, "p256-key", { keyType: "EC:prime256v1" });
  hsm.addKey(TOKEN, "extractable-key", { extractable: true });
});
after(() => hsm.remove());

const open = (overrides: Partial<Parameters<typeof Pkcs11Signer.open>[0]> = {}) =>
  Pkcs11Signer.open({ ...hsm.signerConfig(TOKEN.label, KEY, TOKEN.pin), ...overrides });

/** The module as a second user in this process sees it (PKCS#11 state is per process): to look at or drop sessions. */
function moduleView(): { module: Pkcs11.PKCS11; slot: Pkcs11.Handle; binding: typeof Pkcs11 } {
  const binding = createRequire(import.meta.url)("pkcs11js") as typeof Pkcs11;
  const module = new binding.PKCS11();
  module.load(hsm.module);
  try {
    // With locking, as the signer asks: the first C_Initialize of the process decides, and the view comes first after
    // a signer's close() finalised the module. Initialised without arguments, SoftHSM2 takes no locks at all, and the
    // signer's signatures on libuv's threads then corrupt its heap (one CI run aborted with "malloc(): unaligned
    // fastbin chunk detected").
    module.C_Initialize({ flags: binding.CKF_OS_LOCKING_OK });
  } catch (error) {
    if (!/CKR_CRYPTOKI_ALREADY_INITIALIZED/.test(String(error))) throw error;
  }
  const slot = module.C_GetSlotList(true).find((s) => module.C_GetTokenInfo(s).label.trim() === TOKEN.label);
  assert.ok(slot, "the test's token is present");
  return { module, slot, binding };
}

test("the signer's address is the token key's, and 3,000 signatures recover to it with a low s and v 27 or 28", async () => {
  const signer = open();
  try {
    assert.equal(signer.kind, "pkcs11");
    assert.equal(signer.address, hsm.addressOf(TOKEN.label, KEY));
    assert.equal(signer.extractable, false);
    const secp = loadNative();
    assert.ok(secp, "the native binding loads");
    const hashes = Array.from({ length: 3000 }, (_, i) => keccak256(toHex(`sponsorship ${i}`)));
    const signatures = await Promise.all(hashes.map((hash) => signer.signHash(hash)));
    const recoveryIds = new Set<number>();
    for (const [i, signature] of signatures.entries()) {
      const bytes = hexToBytes(signature);
      assert.equal(bytes.length, 65);
      const v = bytes[64] as number;
      assert.ok(v === 27 || v === 28, `v is ${v}`);
      recoveryIds.add(v);
      assert.ok(BigInt(bytesToHex(bytes.subarray(32, 64))) <= SECP256K1_ORDER / 2n, `signature ${i} has a high s`);
      const digest = personalSignDigest(hashes[i] as Hex);
      const recovered = secp.ecdsaRecover(bytes.subarray(0, 64), v - 27, digest, false);
      assert.equal(publicKeyToAddress(bytesToHex(recovered)), signer.address, `signature ${i}`);
    }
    assert.deepEqual([...recoveryIds].sort(), [27, 28]);
    // The same through an independent implementation (viem's, pure JavaScript), for a sample: it is slow.
    for (const i of [0, 1, 2, 999, 2999]) {
      const signature = signatures[i] as Hex;
      assert.equal(await recoverMessageAddress({ message: { raw: hashes[i] as Hex }, signature }), signer.address);
    }
  } finally {
    signer.close();
  }
});

test("sessions are opened once and reused, however many signatures run at once", async () => {
  const signer = open({ sessions: 3 });
  try {
    assert.equal(signer.sessionsOpened, 3);
    for (let round = 0; round < 5; round++) {
      await Promise.all(Array.from({ length: 200 }, (_, i) => signer.signHash(keccak256(toHex(round * 1000 + i)))));
    }
    assert.equal(signer.sessionsOpened, 3, "no session opened per signature");
  } finally {
    signer.close();
  }
});

test("when the module drops every session (and with them the login), signing opens them again, logs in and goes on", async () => {
  const view = moduleView();
  const signer = open({ sessions: 2 });
  try {
    const before = await signer.signHash(keccak256("0x01"));
    assert.equal(
      await recoverMessageAddress({ message: { raw: keccak256("0x01") }, signature: before }),
      signer.address,
    );
    view.module.C_CloseAllSessions(view.slot);
    // Signatures in flight together when the drop is found: every one of them succeeds after one reopening.
    const hashes = Array.from({ length: 50 }, (_, i) => keccak256(toHex(`after the drop ${i}`)));
    const signatures = await Promise.all(hashes.map((hash) => signer.signHash(hash)));
    for (const [i, signature] of signatures.entries()) {
      assert.equal(await recoverMessageAddress({ message: { raw: hashes[i] as Hex }, signature }), signer.address);
    }
    assert.equal(signer.sessionsOpened, 4, "the pool of two was opened once more, not once per signature");
  } finally {
    signer.close();
  }
  await assert.rejects(signer.signHash(keccak256("0x02")), /closed/);
});

test("when logging in again fails (the PIN was changed), signatures fail with the token's answer, and the next ones try again", async () => {
  const view = moduleView();
  const signer = open({ sessions: 2 });
  const changePin = (from: string, to: string) => {
    const session = view.module.C_OpenSession(view.slot, view.binding.CKF_SERIAL_SESSION | view.binding.CKF_RW_SESSION);
    try {
      view.module.C_SetPIN(session, from, to);
    } finally {
      view.module.C_CloseSession(session);
    }
  };
  try {
    await signer.signHash(keccak256("0x10"));
    // The signer is logged in, so this process may change the PIN; then every session is dropped, and the login too.
    changePin(TOKEN.pin, "9999-changed");
    view.module.C_CloseAllSessions(view.slot);
    const failed = await Promise.allSettled(Array.from({ length: 5 }, (_, i) => signer.signHash(keccak256(toHex(i)))));
    for (const outcome of failed) {
      assert.equal(outcome.status, "rejected");
      assert.match(String((outcome as PromiseRejectedResult).reason), /CKR_PIN_INCORRECT/);
    }
    // The PIN back as configured: the next signature opens the sessions again and succeeds.
    const session = view.module.C_OpenSession(view.slot, view.binding.CKF_SERIAL_SESSION);
    view.module.C_Login(session, view.binding.CKU_USER, "9999-changed");
    changePin("9999-changed", TOKEN.pin);
    view.module.C_CloseAllSessions(view.slot);
    const hash = keccak256("0x11");
    assert.equal(
      await recoverMessageAddress({ message: { raw: hash }, signature: await signer.signHash(hash) }),
      signer.address,
    );
  } finally {
    signer.close();
  }
});

test("the PIN never shows in the signer's string, JSON or inspected form", () => {
  const signer = open();
  try {
    const renderings = [String(signer), JSON.stringify(signer), inspect(signer), format("%o %j", signer, signer)];
    for (const text of renderings) assert.ok(!text.includes(TOKEN.pin), text);
    assert.deepEqual(JSON.parse(JSON.stringify(signer)), { kind: "pkcs11", address: signer.address });
  } finally {
    signer.close();
  }
});

test("a key the token would let out still signs, and says so (the service warns at start)", async () => {
  const signer = open({ keyLabel: "extractable-key" });
  try {
    assert.equal(signer.extractable, true);
    const hash = keccak256("0x03");
    assert.equal(
      await recoverMessageAddress({ message: { raw: hash }, signature: await signer.signHash(hash) }),
      signer.address,
    );
  } finally {
    signer.close();
  }
});

/** Opening with `overrides` fails with a ConfigError matching `message`, and the message does not repeat the PIN. */
function refused(overrides: Partial<Parameters<typeof Pkcs11Signer.open>[0]>, message: RegExp): void {
  assert.throws(
    () => open(overrides),
    (error) => {
      assert.ok(error instanceof ConfigError, String(error));
      assert.match(error.message, message);
      assert.ok(!error.message.includes(TOKEN.pin), error.message);
      return true;
    },
  );
}

test("a wrong module, token, key or PIN stops the opening with a message naming the setting", () => {
  refused(
    { module: "/nonexistent/libpkcs11.so" },
    /^SIGNER_PKCS11_MODULE \/nonexistent\/libpkcs11\.so cannot be loaded as a PKCS#11 module/,
  );
  refused(
    { tokenLabel: "no-such-token" },
    /^SIGNER_PKCS11_TOKEN_LABEL "no-such-token": no token with this label in .*libsofthsm2\.so \(tokens present: "paymaster"\)/,
  );
  refused(
    { keyLabel: "no-such-key" },
    /^SIGNER_PKCS11_KEY_LABEL "no-such-key": no private key with this label on token "paymaster"/,
  );
  refused(
    { keyLabel: "p256-key" },
    /^SIGNER_PKCS11_KEY_LABEL "p256-key": the key is not an elliptic-curve key on secp256k1/,
  );
  const wrongPin = hsm.pinFile("0000-wrong");
  refused(
    { pinFile: wrongPin },
    new RegExp(
      `^SIGNER_PKCS11_PIN_FILE ${wrongPin}: the token refused the PIN \\(CKR_PIN_INCORRECT\\) on token "paymaster"`,
    ),
  );
  refused({ pinFile: "/nonexistent/pin" }, /^SIGNER_PKCS11_PIN_FILE \/nonexistent\/pin cannot be read: ENOENT/);
  const readable = hsm.pinFile(TOKEN.pin);
  chmodSync(readable, 0o644);
  refused({ pinFile: readable }, /^SIGNER_PKCS11_PIN_FILE .* must be readable by its owner only \(chmod 600\)/);
  assert.equal(readFileSync(readable, "utf8").trim(), TOKEN.pin, "the file itself is left alone");
  // After all those, the right settings still open (the failures left the module as they found it).
  open().close();
});
