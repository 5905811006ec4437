import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import { format, inspect } from "node:util";
import { bytesToHex, type Hex, hexToBigInt, recoverMessageAddress } from "viem";
import { privateKeyToAddress } from "viem/accounts";
import { getVerifyingPaymasterHash } from "../../src/bindings/paymasters/paymasterAndData";
import { createSigner, isNativeSignerAvailable, type SignerImplementation } from "../../src/signer/signer";
import { vectorContext, vectorHash, vectorSignature, vectorSignerKey, vectorUserOp } from "../chain/vector";

const implementations: SignerImplementation[] = ["native", "viem"];
const SECP256K1_HALF_ORDER = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n;

test("the native binding loads on this machine (else the service would sign five times slower)", () => {
  assert.equal(isNativeSignerAvailable(), true);
  assert.equal(createSigner(vectorSignerKey).implementation, "native");
  assert.equal(createSigner(vectorSignerKey, { implementation: "viem" }).implementation, "viem");
});

for (const implementation of implementations) {
  test(`${implementation}: hash and signature reproduce the test vector of docs/contracts.md`, async () => {
    const signer = createSigner(vectorSignerKey, { implementation });
    assert.equal(signer.implementation, implementation);
    assert.equal(signer.address, privateKeyToAddress(vectorSignerKey));
    const hash = getVerifyingPaymasterHash(vectorUserOp, vectorContext);
    assert.equal(hash, vectorHash);
    assert.equal(await signer.signHash(hash), vectorSignature);
  });

  test(`${implementation}: the key never shows in a string, JSON or inspected form`, () => {
    const signer = createSigner(vectorSignerKey, { implementation });
    const bareKey = vectorSignerKey.slice(2);
    const keyAsDecimal = hexToBigInt(vectorSignerKey).toString();
    const renderings = [
      String(signer),
      `${signer}`,
      JSON.stringify(signer),
      JSON.stringify({ signer }),
      inspect(signer),
      inspect(signer, { showHidden: true, depth: null, customInspect: false }),
      format("%o %O %j", signer, signer, signer),
      JSON.stringify({ ...signer }),
    ];
    for (const text of renderings) {
      assert.ok(!text.toLowerCase().includes(bareKey), text);
      assert.ok(!text.includes(keyAsDecimal), text);
    }
    assert.equal(String(signer), `Signer(${signer.address})`);
    assert.deepEqual(JSON.parse(JSON.stringify(signer)), { address: signer.address });
    assert.equal(inspect({ signer }), `{ signer: Signer(${signer.address}) }`);
  });
}

test("native and viem agree on random keys and hashes, and the signature recovers to the signer", async () => {
  for (let i = 0; i < 50; i++) {
    const key = bytesToHex(randomBytes(32));
    const hash = bytesToHex(randomBytes(32));
    const native = createSigner(key, { implementation: "native" });
    const viem = createSigner(key, { implementation: "viem" });
    assert.equal(native.address, viem.address);
    const signature = await native.signHash(hash);
    assert.equal(await viem.signHash(hash), signature);
    assert.equal(signature.length, 2 + 130);
    const v = Number.parseInt(signature.slice(-2), 16);
    assert.ok(v === 27 || v === 28, `v = ${v}`);
    // Low s: the contract's ECDSA.tryRecover refuses the high-s twin of a signature.
    assert.ok(hexToBigInt(`0x${signature.slice(66, 130)}`) <= SECP256K1_HALF_ORDER);
    assert.equal(await recoverMessageAddress({ message: { raw: hash }, signature }), native.address);
  }
});

test("a bad key or hash is refused without the key in the message", async () => {
  const outOfRange: Hex = `0x${"ff".repeat(32)}`;
  const cases: Hex[] = ["0x1234", `0x${"00".repeat(32)}`, outOfRange, `0x${"zz".repeat(32)}` as Hex];
  for (const implementation of implementations) {
    for (const key of cases) {
      assert.throws(
        () => createSigner(key, { implementation }),
        (error: Error) =>
          !error.message.includes("ff".repeat(8)) && !error.message.includes(hexToBigInt(outOfRange).toString()),
      );
    }
    const signer = createSigner(vectorSignerKey, { implementation });
    await assert.rejects(signer.signHash("0x1234"), /32-byte/);
    await assert.rejects(signer.signHash(`${vectorHash}00`), /32-byte/);
  }
});
