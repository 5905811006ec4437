// The service as an operator starts it with its signer key in a PKCS#11 token (SoftHSM2, with a token and a
// non-extractable secp256k1 key made here): the development start makes the token's key the local chain's paymaster
// signer, /readyz names it, no key file appears in the data folder, the demo's operations (EntryPoint v0.6, v0.7 and
// v0.8) signed through the token are mined, a v0.6 sponsorship recovers over the contract's own getHash to the token's
// address, the contracts command finds the token's key in the signer sets, and a wrong PIN or label stops the start
// with a message naming the setting.
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import {
  type Address,
  concat,
  createPublicClient,
  encodeFunctionData,
  type Hex,
  http,
  recoverMessageAddress,
} from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { verifyingPaymasterArtifact } from "../../src/bindings/paymasters/artifacts";
import { decodeVerifyingPaymasterAndData } from "../../src/bindings/paymasters/paymasterAndData";
import { ANVIL_FIRST_ACCOUNT } from "../../src/devChain/deployments";
import { readLocalChainInfo } from "../../src/devChain/localChain";
import { simpleAccountFactoryAbi } from "../../src/devChain/simpleAccount";
import { postJsonRpc } from "../helpers/postJsonRpc";
import { embeddedEnv, type RunningService, runScript, spawnService, startService } from "../helpers/service";
import { createSoftHsm, type SoftHsm } from "../helpers/softHsm";

const TOKEN = { label: "paymaster", pin: "2468-e2e" };
const KEY = "verifying-signer";
let hsm: SoftHsm;
let tokenAddress: Address;
const folders: string[] = [];
const running: RunningService[] = [];

before(() => {
  hsm = createSoftHsm();
  hsm.addToken(TOKEN.label, TOKEN.pin);
  hsm.addKey(TOKEN, KEY);
  tokenAddress = hsm.addressOf(TOKEN.label, KEY);
});
after(async () => {
  await Promise.all(running.map((service) => service.stop()));
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
  hsm.remove();
});

function dataFolder(): string {
  const folder = mkdtempSync(path.join(tmpdir(), "paymaster-pkcs11-"));
  folders.push(folder);
  return folder;
}

/** The development start with the local chain, the signer in the token; `overrides` change a setting. */
const pkcs11Env = (dataDir: string, overrides: Record<string, string> = {}) =>
  embeddedEnv(dataDir, {
    LOCAL_CHAIN: "auto",
    LOG_LEVEL: "info",
    ...hsm.signerEnv(TOKEN.label, KEY, TOKEN.pin),
    ...overrides,
  });

/** A deployment-only operation of a fresh SimpleAccount, with its gas values: what the demo's dApp sponsors. */
function deploymentOperation(factory: Address, sender: Address, owner: Address) {
  return {
    sender,
    nonce: 0n,
    initCode: concat([
      factory,
      encodeFunctionData({ abi: simpleAccountFactoryAbi, functionName: "createAccount", args: [owner, 0n] }),
    ]),
    callData: "0x" as Hex,
    callGasLimit: 50_000n,
    verificationGasLimit: 400_000n,
    preVerificationGas: 60_000n,
    maxFeePerGas: 2_000_000_000n,
    maxPriorityFeePerGas: 1_000_000n,
  };
}

test("the development start signs through the token: /readyz names it, no key file, the demo's operations are mined, getHash recovers to the token", async () => {
  const dataDir = dataFolder();
  const service = await startService(pkcs11Env(dataDir));
  running.push(service);
  await service.outputMatching(/paymaster service listening/);
  assert.match(service.output(), new RegExp(`"signer":"${tokenAddress}","signerKind":"pkcs11"`));

  const ready = (await (await fetch(`${service.baseUrl}/readyz`)).json()) as { signer: unknown };
  assert.deepEqual(ready.signer, { kind: "pkcs11", address: tokenAddress });
  const files = readdirSync(dataDir);
  assert.ok(!files.includes("signer.key"), `no signer key file in the data folder: ${files.join(", ")}`);
  assert.ok(!files.some((file) => /key/i.test(file) && file !== "webhook.key"), files.join(", "));

  // The demo's v0.6, token-paid, v0.7 and v0.8 operations: signed by the token, accepted by our contracts on chain.
  const demo = await runScript("src/cli/demo.ts", [], pkcs11Env(dataDir));
  assert.equal(demo.code, 0, `demo failed:\n${demo.stdout}\n${demo.stderr}`);
  assert.match(demo.stdout, /UserOperationEvent success: true/);
  assert.match(demo.stdout, /UserOperationEvent success: true, EntryPoint v0\.7/);
  assert.match(demo.stdout, /UserOperationEvent success: true, EntryPoint v0\.8/);

  // One more v0.6 sponsorship for the demo's dApp, checked against the paymaster contract's own getHash.
  const apiKey = /apiKey (\S+)/.exec(demo.stdout)?.[1];
  assert.ok(apiKey, demo.stdout);
  const chain = readLocalChainInfo(dataDir);
  assert.ok(chain);
  const client = createPublicClient({ transport: http(chain.rpcUrl) });
  const owner = privateKeyToAccount(generatePrivateKey()).address;
  const sender = await client.readContract({
    address: chain.simpleAccountFactory,
    abi: simpleAccountFactoryAbi,
    functionName: "getAddress",
    args: [owner, 0n],
  });
  const op = deploymentOperation(chain.simpleAccountFactory, sender, owner);
  const hex = (value: bigint) => `0x${value.toString(16)}`;
  const { body } = await postJsonRpc<{ paymasterAndData: Hex; reason?: string }>(
    `${service.baseUrl}/api/v1/31337/${apiKey}`,
    "pm_sponsorUserOperation",
    [
      Object.fromEntries(
        Object.entries({ ...op, signature: "0x" }).map(([k, v]) => [k, typeof v === "bigint" ? hex(v) : v]),
      ),
      {
        mode: "SPONSORED",
        calculateGasLimits: false,
        sponsorshipInfo: { smartAccountInfo: { name: "INFINITISM", version: "1.0.0" } },
      },
    ],
  );
  assert.ok(body.result && !body.result.reason, JSON.stringify(body));
  const data = decodeVerifyingPaymasterAndData(body.result.paymasterAndData);
  assert.equal(data.paymaster.toLowerCase(), chain.verifyingPaymaster.toLowerCase());
  const hash = await client.readContract({
    address: chain.verifyingPaymaster,
    abi: verifyingPaymasterArtifact.abi,
    functionName: "getHash",
    args: [
      { ...op, paymasterAndData: "0x", signature: "0x" },
      data.paymasterId,
      Number(data.validUntil),
      Number(data.validAfter),
    ],
  });
  assert.equal(await recoverMessageAddress({ message: { raw: hash }, signature: data.signature }), tokenAddress);
  // The contracts command reads the same SIGNER_PKCS11_* settings: its signer-set check names the token's key.
  const contracts = await runScript(
    "src/cli/contracts.ts",
    ["status", "--rpc-url", chain.rpcUrl, "--owner", ANVIL_FIRST_ACCOUNT, "--entry-points", "0.6,0.7,0.8"],
    pkcs11Env(dataDir),
  );
  assert.match(
    contracts.stdout,
    new RegExp(`the service's key ${tokenAddress} is in the signer set`),
    contracts.stderr,
  );
  assert.doesNotMatch(contracts.stdout, /is not in the signer set/);
  assert.ok(!service.output().includes(TOKEN.pin), "the PIN is not logged");
  assert.equal(await service.stop(), 0);
  running.splice(running.indexOf(service), 1);
});

test("a wrong PIN, token label or key label stops the start with a message naming the setting, before anything is written", async () => {
  const wrong = {
    SIGNER_PKCS11_PIN_FILE: [
      hsm.pinFile("1357-wrong"),
      /SIGNER_PKCS11_PIN_FILE .*: the token refused the PIN \(CKR_PIN_INCORRECT\)/,
    ],
    SIGNER_PKCS11_TOKEN_LABEL: ["no-such-token", /SIGNER_PKCS11_TOKEN_LABEL "no-such-token": no token with this label/],
    SIGNER_PKCS11_KEY_LABEL: ["no-such-key", /SIGNER_PKCS11_KEY_LABEL "no-such-key": no private key with this label/],
  } as const;
  for (const [setting, [value, message]] of Object.entries(wrong)) {
    const dataDir = dataFolder();
    const spawned = spawnService(pkcs11Env(dataDir, { [setting]: value }));
    assert.equal(await spawned.exited, 1, `${setting}: ${spawned.stderr()}`);
    assert.match(spawned.stderr(), new RegExp(`^Cannot start: ${message.source}`, "m"));
    // The token is opened first: nothing was begun, neither a database nor a key file nor a local chain.
    assert.deepEqual(readdirSync(dataDir), [], `${setting}: the data folder is left empty`);
  }
});
