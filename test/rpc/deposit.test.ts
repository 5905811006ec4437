// The deposit rule against a real chain: the dApp's balance in our paymaster on anvil, less what its outstanding
// sponsorships can cost, must cover the new operation's worst case; an RPC that fails refuses, within a bounded time.
import assert from "node:assert/strict";
import { createServer, type Server, type Socket } from "node:net";
import { after, before, describe, test } from "node:test";
import { type Address, encodeFunctionData, type Hex, parseGwei, size } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { POST_OP_OVERHEAD_GAS } from "../../src/bindings/entryPoints/prefund";
import type { UserOperation } from "../../src/bindings/entryPoints/userOperation";
import { verifyingPaymasterArtifact } from "../../src/bindings/paymasters/artifacts";
import { CHAIN_RPC_TIMEOUT_MS } from "../../src/chain/chainClient";
import { EXPIRY_MARGIN_SECONDS } from "../../src/chain/paymasterDeposit";
import { simpleAccountAbi } from "../../src/devChain/simpleAccount";
import { NO_RPC_REASON } from "../../src/sponsorship/rules/deposit";
import { etherToWei, weiToEther } from "../../src/sponsorship/spendingLimit";
import { listSponsorships } from "../../src/storage/sponsorships";
import { anvilKeys, reservedFor } from "../contracts/fixtures";
import { startTestApp } from "../helpers/app";
import {
  type ChainApp,
  chainDapp,
  deposit,
  freshOperation,
  requestSponsorship,
  startChainApp,
  TARGET,
} from "../helpers/chainApp";
import { fundedDapp } from "../helpers/dappSetup";

let app: ChainApp;

before(async () => {
  app = await startChainApp();
});
after(() => app?.close());

/** `count` first operations of fresh accounts, all at one fee so that they cost the same. */
async function operations(count: number): Promise<UserOperation[]> {
  const ops: UserOperation[] = [];
  for (let i = 0; i < count; i++) {
    const { op } = await freshOperation(app);
    ops.push({ ...op, maxFeePerGas: parseGwei("3"), maxPriorityFeePerGas: parseGwei("1") });
  }
  return ops;
}

const address = (key: Hex) => privateKeyToAccount(key).address.toLowerCase();

const tooSmall = (wallet: string, balance: bigint, held: bigint, needed: bigint) =>
  `Deposit too small: the paymaster's deposit for ${wallet} is ${weiToEther(balance)} ETH, ` +
  `${weiToEther(held)} ETH is held by unexpired sponsorships, this operation needs up to ${weiToEther(needed)} ETH`;

describe("deposit on a chain with an RPC", () => {
  test("the contract's overhead is the one the rule adds", async () => {
    const overhead = await app.env.publicClient.readContract({
      address: app.env.paymaster,
      abi: verifyingPaymasterArtifact.abi,
      functionName: "POST_OP_OVERHEAD_GAS",
    });
    assert.equal(overhead, POST_OP_OVERHEAD_GAS);
  });

  test("a deposit too small: refused, naming the balance, what is held and what the operation needs", async () => {
    const dapp = await chainDapp(app.t, anvilKeys.fundingWallet);
    const [op] = (await operations(1)) as [UserOperation];
    const needed = reservedFor(op, POST_OP_OVERHEAD_GAS);

    const refused = await requestSponsorship(app.t, dapp, op);
    assert.equal(refused.paymasterAndData, "0x");
    assert.equal(refused.reason, tooSmall(address(anvilKeys.fundingWallet), 0n, 0n, needed));
    const [record] = await listSponsorships(app.t.db, dapp.paymasterId);
    assert.deepEqual(record?.rule_outcomes.at(-1), { rule: "deposit", passed: false, reason: refused.reason });

    // One wei short still refuses; the balance is read again once the 2 s cache has passed.
    await deposit(app, needed - 1n, anvilKeys.fundingWallet);
    app.advance(2_500);
    const short = await requestSponsorship(app.t, dapp, op);
    assert.equal(short.reason, tooSmall(address(anvilKeys.fundingWallet), needed - 1n, 0n, needed));
    await deposit(app, 1n, anvilKeys.fundingWallet);
    app.advance(2_500);
    const sponsored = await requestSponsorship(app.t, dapp, op);
    assert.equal(sponsored.reason, undefined);
    assert.equal(size(sponsored.paymasterAndData), 276);
  });

  test("every unexpired signature holds its worst case, for every dApp sharing the wallet; expired ones hold nothing", async () => {
    const key = anvilKeys.otherFundingWallet;
    const dapp = await chainDapp(app.t, key);
    // Another dApp with the same funding wallet spends the same balance.
    const sibling = await chainDapp(app.t, key);
    const [op1, op2, op3] = (await operations(3)) as [UserOperation, UserOperation, UserOperation];
    const needed = reservedFor(op1, POST_OP_OVERHEAD_GAS);
    const balance = (needed * 7n) / 2n;
    await deposit(app, balance, key);

    assert.equal((await requestSponsorship(app.t, dapp, op1)).reason, undefined);
    // The same operation again (a wallet asking twice) holds as much again until one of the two is mined.
    assert.equal((await requestSponsorship(app.t, dapp, op1, { expiryDuration: 600 })).reason, undefined);
    assert.equal((await requestSponsorship(app.t, sibling, op2)).reason, undefined);
    const refused = await requestSponsorship(app.t, dapp, op3);
    assert.equal(refused.reason, tooSmall(address(key), balance, 3n * needed, needed));
    assert.equal(
      (await requestSponsorship(app.t, sibling, op3)).reason,
      refused.reason,
      "the sibling dApp sees the same deposit",
    );

    // Past the longest validUntil (600 s, counted to the end of its minute) and the margin, nothing is held any more.
    app.advance((600 + 60 + EXPIRY_MARGIN_SECONDS + 1) * 1000);
    assert.equal((await requestSponsorship(app.t, dapp, op3)).reason, undefined);
  });

  test("concurrent requests of one instance cannot spend the same balance twice", async () => {
    const key = anvilKeys.stranger;
    const dapp = await chainDapp(app.t, key);
    const ops = await operations(8);
    const needed = reservedFor(ops[0] as UserOperation, POST_OP_OVERHEAD_GAS);
    await deposit(app, (needed * 5n) / 2n, key);
    app.advance(2_500);

    const answers = await Promise.all(ops.map((op) => requestSponsorship(app.t, dapp, op)));
    const sponsored = answers.filter((a) => a.reason === undefined);
    assert.equal(sponsored.length, 2, JSON.stringify(answers.map((a) => a.reason)));
    for (const refused of answers.filter((a) => a.reason !== undefined)) {
      // Held: at least the two sponsored ones, recorded or still in flight when the refused one was decided (one
      // being recorded at that very moment may count twice: the check errs towards refusing).
      const held = /is held/.test(refused.reason ?? "") ? /, ([\d.]+) ETH is held/.exec(refused.reason ?? "")?.[1] : "";
      assert.match(refused.reason ?? "", /^Deposit too small: /);
      assert.ok(held && etherToWei(Number(held)) >= 2n * needed, refused.reason);
    }
  });

  test("a verifying paymaster address where no contract is deployed: refused, saying so", async () => {
    const missing: Address = "0x00000000000000000000000000000000000000aa";
    const t = await startTestApp({
      signer: app.env.serviceSigner,
      chains: new Map([
        [31337, { chainId: 31337, name: "local", rpcUrl: app.env.anvil.rpcUrl, verifyingPaymaster: missing }],
      ]),
    });
    try {
      const dapp = await chainDapp(t, anvilKeys.fundingWallet);
      const [op] = (await operations(1)) as [UserOperation];
      const refused = await requestSponsorship(t, dapp, op);
      assert.equal(
        refused.reason,
        "Deposit not checked: reading it through the RPC of chain 31337 (local) failed: " +
          `no verifying paymaster contract answers at ${missing}; ` +
          "no operation is sponsored past a deposit that cannot be read",
      );
    } finally {
      await t.close();
    }
  });
});

/** An operation for apps without a chain: nothing runs it, only the rules read it. */
function offChainOperation(): UserOperation {
  return {
    sender: privateKeyToAccount(generatePrivateKey()).address,
    nonce: 0n,
    initCode: "0x",
    callData: encodeFunctionData({ abi: simpleAccountAbi, functionName: "execute", args: [TARGET, 0n, "0x"] }),
    callGasLimit: 100_000n,
    verificationGasLimit: 100_000n,
    preVerificationGas: 50_000n,
    maxFeePerGas: parseGwei("3"),
    maxPriorityFeePerGas: parseGwei("1"),
    paymasterAndData: "0x",
    signature: "0x",
  };
}

async function appWithRpc(rpcUrl: string | undefined) {
  const t = await startTestApp({
    chains: new Map([[31337, { chainId: 31337, name: "local", ...(rpcUrl ? { rpcUrl } : {}) }]]),
  });
  const dapp = await fundedDapp(t, { contract: { address: TARGET } });
  return { t, dapp };
}

describe("deposit without a usable RPC", () => {
  test("a chain without an RPC signs without the check, and the record says so", async () => {
    const { t, dapp } = await appWithRpc(undefined);
    try {
      const answer = await requestSponsorship(t, dapp, offChainOperation());
      assert.equal(answer.reason, undefined);
      assert.equal(size(answer.paymasterAndData), 276);
      const [record] = await listSponsorships(t.db, dapp.paymasterId);
      assert.ok(record?.rule_outcomes.some((o) => o.rule === "deposit" && o.passed && o.reason === NO_RPC_REASON));
    } finally {
      await t.close();
    }
  });

  test("an unreachable RPC (http://127.0.0.1:1): a refusal at once, not an error", async () => {
    const { t, dapp } = await appWithRpc("http://127.0.0.1:1");
    try {
      const started = performance.now();
      const answer = await requestSponsorship(t, dapp, offChainOperation());
      const ms = performance.now() - started;
      assert.equal(answer.paymasterAndData, "0x");
      assert.match(
        answer.reason ?? "",
        /^Deposit not checked: reading it through the RPC of chain 31337 \(local\) failed: /,
      );
      assert.doesNotMatch(answer.reason ?? "", /127\.0\.0\.1:1/, "the RPC URL is not shown (it may carry an API key)");
      assert.ok(ms < 1_000, `${ms} ms`);
    } finally {
      await t.close();
    }
  });

  test("a refused connection and an RPC that never answers: refusals within the client's timeout, one call shared", async (t) => {
    let requests = 0;
    const silent = await listen((socket) => {
      // Reads the requests, never answers.
      socket.on("data", (chunk) => {
        requests += chunk.toString().split("POST / HTTP/1.1").length - 1;
      });
    });
    const closedPort = await freePort();
    try {
      const refusedApp = await appWithRpc(`http://127.0.0.1:${closedPort}`);
      try {
        const answer = await requestSponsorship(refusedApp.t, refusedApp.dapp, offChainOperation());
        assert.match(answer.reason ?? "", /failed: connection refused; /);
      } finally {
        await refusedApp.t.close();
      }

      const hanging = await appWithRpc(`http://127.0.0.1:${silent.port}`);
      try {
        const started = performance.now();
        const answers = await Promise.all(
          [1, 2, 3].map(() => requestSponsorship(hanging.t, hanging.dapp, offChainOperation())),
        );
        const ms = performance.now() - started;
        t.diagnostic(`3 concurrent requests against a silent RPC answered in ${Math.round(ms)} ms`);
        for (const answer of answers) {
          assert.equal(answer.paymasterAndData, "0x");
          assert.match(answer.reason ?? "", new RegExp(`failed: no answer within ${CHAIN_RPC_TIMEOUT_MS} ms; `));
        }
        assert.ok(ms >= CHAIN_RPC_TIMEOUT_MS - 100 && ms < CHAIN_RPC_TIMEOUT_MS + 2_000, `${ms} ms`);
        assert.equal(requests, 1, "the three requests shared one balance read");
      } finally {
        await hanging.t.close();
      }
    } finally {
      await silent.close();
    }
  });
});

async function listen(onConnection: (socket: Socket) => void) {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    onConnection(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
