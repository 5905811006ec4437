// From a module's raw ECDSA (r, s) to the r ‖ s ‖ v our contracts take: s brought to the lower half (EIP-2), v found
// against the key's public key. The reference is the key-file signer, which signs with libsecp256k1's own low-s
// signatures and recovery ids.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import { bytesToHex, hexToBytes } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { ethereumSignature } from "../../src/signer/ethereumSignature";
import { createSigner, loadNative, personalSignDigest, SECP256K1_ORDER } from "../../src/signer/signer";

const ORDER_BYTES = hexToBytes(`0x${SECP256K1_ORDER.toString(16)}`);

/** r ‖ (n − s): the other valid signature of the pair, which a module is as likely to return. */
function highS(rs: Uint8Array): Uint8Array {
  const s = BigInt(bytesToHex(rs.subarray(32)));
  const flipped = hexToBytes(`0x${(SECP256K1_ORDER - s).toString(16).padStart(64, "0")}`);
  return Uint8Array.from([...rs.subarray(0, 32), ...flipped]);
}

function publicKeyOf(key: `0x${string}`): Uint8Array {
  return hexToBytes(privateKeyToAccount(key).publicKey);
}

test("low and high s of the same signature give the key-file signer's 65 bytes, for both recovery ids", async () => {
  const secp = loadNative();
  assert.ok(secp, "the native binding loads");
  const seen = new Set<number>();
  for (let i = 0; i < 200; i++) {
    const key = generatePrivateKey();
    const hash = bytesToHex(randomBytes(32));
    const expected = await createSigner(key).signHash(hash);
    const digest = personalSignDigest(hash);
    const lowS: Uint8Array = secp.ecdsaSign(digest, hexToBytes(key)).signature;
    assert.equal(await ethereumSignature(lowS, digest, publicKeyOf(key)), expected);
    assert.equal(await ethereumSignature(highS(lowS), digest, publicKeyOf(key)), expected);
    seen.add(hexToBytes(expected)[64] as number);
  }
  assert.deepEqual([...seen].sort(), [27, 28], "both recovery ids occur");
});

test("a signature by another key, of another digest, or out of range is refused, not passed on", async () => {
  const key = generatePrivateKey();
  const digest = personalSignDigest(bytesToHex(randomBytes(32)));
  const secp = loadNative();
  assert.ok(secp);
  const { signature } = secp.ecdsaSign(digest, hexToBytes(key));
  const otherKey = publicKeyOf(generatePrivateKey());
  await assert.rejects(ethereumSignature(signature, digest, otherKey), /does not recover to the token key/);
  await assert.rejects(
    ethereumSignature(signature, personalSignDigest(bytesToHex(randomBytes(32))), publicKeyOf(key)),
    /does not recover to the token key/,
  );
  await assert.rejects(ethereumSignature(signature.subarray(0, 63), digest, publicKeyOf(key)), /63 bytes, not r ‖ s/);
  const rIsOrder = Uint8Array.from([...ORDER_BYTES, ...signature.subarray(32)]);
  await assert.rejects(ethereumSignature(rIsOrder, digest, publicKeyOf(key)), /out of the secp256k1 range/);
  await assert.rejects(ethereumSignature(new Uint8Array(64), digest, publicKeyOf(key)), /out of the secp256k1 range/);
});
