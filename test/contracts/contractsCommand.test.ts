// The contracts command's refusals, run as a child process against anvil holding the canonical EntryPoint v0.7: each
// names the problem and what to do, exits non-zero, and sends nothing (the chain's block number does not move).
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import type { Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { ENTRY_POINT_V07_ADDRESS } from "../../src/bindings/entryPoints/entryPointV07";
import type { Artifact } from "../../src/bindings/paymasters/artifacts";
import { OUR_PAYMASTERS, paymasterInitCode } from "../../src/bindings/paymasters/ourPaymasters";
import { CREATE2_PROXY_ADDRESS, create2Address } from "../../src/chain/create2";
import { entryPointStack } from "../../src/devChain/entryPointV07Deployments";
import { deployCreate2Batch } from "../../src/devChain/localBatch";
import { embeddedEnv } from "../helpers/service";
import { anvilKeys, type LocalChain, startLocalChain } from "./fixtures";

const ROOT = path.resolve(import.meta.dirname, "../..");
const owner = privateKeyToAccount(anvilKeys.owner).address;
let chain: LocalChain;
let folder: string;
const files = { ownerKey: "", strangerKey: "", signerKey: "", chains: "" };

before(async () => {
  folder = mkdtempSync(path.join(tmpdir(), "paymaster-contracts-command-"));
  chain = await startLocalChain({ chainId: 84532 });
  await deployCreate2Batch(chain.clients(anvilKeys.stranger), { entryPoint: entryPointStack("0.7").entryPoint });
  const key = (name: string, value: Hex, mode = 0o600) => {
    const file = path.join(folder, name);
    writeFileSync(file, `${value}\n`, { mode });
    return file;
  };
  files.ownerKey = key("owner.key", anvilKeys.owner);
  files.strangerKey = key("stranger.key", anvilKeys.stranger);
  files.signerKey = key("signer.key", anvilKeys.fundingWallet);
  files.chains = path.join(folder, "chains.json");
  writeFileSync(files.chains, JSON.stringify([{ chainId: 84532, name: "Base Sepolia (anvil)" }]));
});
after(async () => {
  await chain?.anvil.stop();
  rmSync(folder, { recursive: true, force: true });
});

async function contracts(...args: string[]): Promise<{ code: number | null; out: string }> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", "src/cli/contracts.ts", ...args, "--rpc-url", chain.anvil.rpcUrl],
    {
      cwd: ROOT,
      env: embeddedEnv(folder, { CHAINS_FILE: files.chains, SIGNER_KEY_FILE: files.signerKey }),
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let out = "";
  child.stdout.on("data", (chunk) => (out += chunk));
  child.stderr.on("data", (chunk) => (out += chunk));
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  return { code, out };
}

const deployV07 = (...more: string[]) =>
  contracts("deploy", "--owner", owner, "--key-file", files.ownerKey, "--entry-points", "0.7", ...more);

/** Runs `step` and checks that it sent nothing. */
async function sendsNothing<T>(step: () => Promise<T>): Promise<T> {
  const before = await chain.publicClient.getBlockNumber();
  const result = await step();
  assert.equal(await chain.publicClient.getBlockNumber(), before, "nothing was sent");
  return result;
}

test("deploy refuses, sending nothing, when an EntryPoint is missing, the key is not the owner's or a key file is open to others", async () => {
  const missing = await sendsNothing(() =>
    contracts("deploy", "--owner", owner, "--key-file", files.ownerKey, "--entry-points", "0.7,0.8"),
  );
  assert.equal(missing.code, 1);
  assert.match(
    missing.out,
    /EntryPoint v0\.8 is not at its canonical address 0x4337084D9E255Ff0702461CF8895CE9E3b5Ff108/,
  );
  assert.match(missing.out, /leave v0\.8 out with --entry-points/);
  assert.doesNotMatch(missing.out, /EntryPoint v0\.7 is not/);

  const notOwner = await sendsNothing(() =>
    contracts("deploy", "--owner", owner, "--key-file", files.strangerKey, "--entry-points", "0.7"),
  );
  assert.equal(notOwner.code, 1);
  assert.match(notOwner.out, new RegExp(`--key-file holds the key of 0x[0-9a-fA-F]{40}, not of --owner ${owner}`));

  const open = path.join(folder, "open.key");
  writeFileSync(open, `${anvilKeys.owner}\n`, { mode: 0o644 });
  const readable = await sendsNothing(() =>
    contracts("deploy", "--owner", owner, "--key-file", open, "--entry-points", "0.7"),
  );
  assert.equal(readable.code, 1);
  assert.match(readable.out, /owner key file .*open\.key must be readable by its owner only \(chmod 600\)/);
  assert.doesNotMatch(readable.out, new RegExp(anvilKeys.owner.slice(2)), "the key is never printed");
});

test("bad options are refused with the option named, before anything is read or sent", async () => {
  const cases: [string[], RegExp][] = [
    [["deploy", "--owner", "0x123", "--key-file", "x"], /--owner must be an address/],
    [
      ["deploy", "--owner", owner, "--key-file", files.ownerKey, "--entry-points", "0.5"],
      /--entry-points must be a comma-separated list of 0\.6, 0\.7, 0\.8, 0\.9, got "0\.5"/,
    ],
    [
      ["stake", "--key-file", files.ownerKey, "--amount", "one", "--unstake-delay", "86400"],
      /--amount must be a positive number of ether/,
    ],
    [
      ["stake", "--key-file", files.ownerKey, "--amount", "1", "--unstake-delay", "1.5"],
      /--unstake-delay must be a whole number of seconds/,
    ],
    [["signers", "rotate", "--key-file", files.ownerKey], /signers needs add or remove/],
    [["launch"], /unknown subcommand "launch"/],
  ];
  for (const [args, message] of cases) {
    const run = await sendsNothing(() => contracts(...args));
    assert.equal(run.code, 2, `${args.join(" ")}: ${run.out}`);
    assert.match(run.out, message, args.join(" "));
    assert.match(run.out, /usage: contracts <subcommand>/);
  }
});

test("--dry-run prints what deploy would send and sends nothing; foreign code at our address is refused", async () => {
  const dry = await sendsNothing(() => deployV07("--dry-run"));
  assert.equal(dry.code, 0, dry.out);
  assert.match(
    dry.out,
    /would send: deploying VerifyingPaymasterV07 for EntryPoint v0\.7 at 0x[0-9a-fA-F]{40}: to 0x4e59b44847b379578588920cA78FbF26c0B4956C/,
  );
  assert.match(
    dry.out,
    /would send: adding the service's key 0x[0-9a-fA-F]{40} to the signers of verifying paymaster v0\.7/,
  );

  const ours = create2Address(
    paymasterInitCode(OUR_PAYMASTERS["0.7"].paymasters.verifying, ENTRY_POINT_V07_ADDRESS, owner),
  );
  await chain.testClient.setCode({ address: ours, bytecode: "0x6001600055" });
  const foreign = await sendsNothing(() => deployV07());
  assert.equal(foreign.code, 1);
  assert.match(
    foreign.out,
    new RegExp(`verifying paymaster v0\\.7 ${ours} holds code that is not our VerifyingPaymasterV07`),
  );
  await chain.testClient.setCode({ address: ours, bytecode: "0x" });
});

test("without the CREATE2 proxy, deploy says how to get one; without a deployment, stake says to deploy first", async () => {
  const stake = await sendsNothing(() =>
    contracts(
      "stake",
      "--key-file",
      files.ownerKey,
      "--amount",
      "1",
      "--unstake-delay",
      "86400",
      "--entry-points",
      "0.7",
    ),
  );
  assert.equal(stake.code, 1);
  assert.match(stake.out, /no paymaster of ours for owner .* deploy them first with `contracts deploy`/);

  const proxy = await chain.publicClient.getCode({ address: CREATE2_PROXY_ADDRESS });
  await chain.testClient.setCode({ address: CREATE2_PROXY_ADDRESS, bytecode: "0x" });
  try {
    const noProxy = await sendsNothing(() => deployV07());
    assert.equal(noProxy.code, 1);
    assert.match(noProxy.out, /has no CREATE2 proxy at 0x4e59b44847b379578588920cA78FbF26c0B4956C/);
    assert.match(noProxy.out, /fund 0x3fab184622dc19b6109349b94811493bf2a45362/);
  } finally {
    await chain.testClient.setCode({ address: CREATE2_PROXY_ADDRESS, bytecode: proxy as Hex });
  }
});

test("status with no paymaster of ours for the chain in the chains file says there is nothing to check and exits 1", async () => {
  // The chains file lists 84532 with its name only: no verifying or token paymaster, for any EntryPoint version.
  const run = await sendsNothing(() => contracts("status"));
  assert.equal(run.code, 1, run.out);
  assert.match(
    run.out,
    /nothing to check on chain 84532: the chains file names no paymaster addresses for chain 84532/,
  );
  assert.doesNotMatch(run.out, /every check holds/);
});

// Last: it deploys, which the refusals above must not see.
test("deploy --kinds permitToken deploys the up-front token paymaster from v0.7 on, and status --owner checks it", async () => {
  const none = await sendsNothing(() =>
    contracts(
      "deploy",
      "--owner",
      owner,
      "--key-file",
      files.ownerKey,
      "--entry-points",
      "0.6",
      "--kinds",
      "permitToken",
    ),
  );
  assert.equal(none.code, 1, none.out);
  assert.match(
    none.out,
    /nothing to deploy: the up-front token paymaster \(permitToken\) needs EntryPoint v0\.7 or later/,
  );

  const deployed = await deployV07("--kinds", "permitToken", "--json");
  assert.equal(deployed.code, 0, deployed.out);
  const expected = create2Address(
    paymasterInitCode(OUR_PAYMASTERS["0.7"].paymasters.permitToken as Artifact, ENTRY_POINT_V07_ADDRESS, owner),
  );
  // The chains-file entry names it under its own field, which the chains file accepts.
  assert.match(deployed.out, new RegExp(`"permitTokenPaymaster": "${expected}"`));
  assert.match(deployed.out, /deploying PermitTokenPaymasterV07 for EntryPoint v0\.7/);

  const status = await contracts("status", "--owner", owner, "--entry-points", "0.7", "--kinds", "permitToken");
  assert.equal(status.code, 1, status.out);
  assert.match(status.out, new RegExp(`ok +code \\(v0\\.7 permitToken ${expected}\\): our PermitTokenPaymasterV07`));
  assert.match(status.out, /ok +signer \(v0\.7 permitToken/);
  for (const unfinished of ["stake", "deposit", "feeToken"]) {
    assert.match(status.out, new RegExp(`FAIL ${unfinished} \\(v0\\.7 permitToken`), unfinished);
  }
});
