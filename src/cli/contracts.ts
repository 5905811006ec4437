// The contracts command: puts our paymasters on a chain and keeps them fit to sponsor (docs/networks.md).
//   npm run contracts -- <subcommand> …      (development)
//   node dist/cli/contracts.js <subcommand> … (production build)
// It reads the service's own configuration (CHAINS_FILE, the SIGNER_* settings of a key or a PKCS#11 token, DATA_DIR) for the
// service's signer address and the chain's fee tokens; transaction keys come from --key-file only.
import { parseArgs } from "node:util";
import type { Address, Hex } from "viem";
import { OUR_PAYMASTER_KINDS } from "../bindings/paymasters/ourPaymasters";
import { ConfigError } from "../config";
import { deploy } from "./contracts/deploy";
import { deposit } from "./contracts/deposit";
import {
  address,
  amount,
  CommandError,
  entryPointVersions,
  kinds,
  OPTION_TYPES,
  type RawOptions,
  required,
  rpcUrl,
  UsageError,
  unstakeDelay,
} from "./contracts/options";
import {
  connect,
  firstLine,
  ownerWallet,
  type Reporter,
  reporter,
  type SentTransaction,
  send,
  serviceSide,
} from "./contracts/session";
import { changeSigners } from "./contracts/signers";
import { stake, unlockStake, withdrawStake } from "./contracts/stake";
import { status } from "./contracts/status";
import { ownedTargets } from "./contracts/targets";

const USAGE = `usage: contracts <subcommand> [options]   (npm run contracts -- …, or node dist/cli/contracts.js …)
  deploy         --rpc-url URL --owner ADDRESS --key-file FILE [--entry-points 0.6,0.7,0.8,0.9] [--kinds verifying,token,permitToken]
  status         --rpc-url URL [--owner ADDRESS [--entry-points …] [--kinds …]]   exit 0 when every check holds, 1 otherwise
  stake          --rpc-url URL --key-file FILE --amount ETH --unstake-delay SECONDS [--entry-points …] [--kinds …]
  unlock-stake   --rpc-url URL --key-file FILE [--entry-points …] [--kinds …]
  withdraw-stake --rpc-url URL --key-file FILE --to ADDRESS [--entry-points …] [--kinds …]
  deposit        --rpc-url URL --key-file FILE --amount ETH [--entry-points …]   (token paymasters' own deposit)
  signers add|remove --rpc-url URL --key-file FILE --signer ADDRESS [--entry-points …] [--kinds …]
every subcommand: --json (machine output on stdout, progress on stderr), --dry-run (print what would be sent, send nothing)
--key-file: a file holding the owner's private key (0x and 64 hex digits, chmod 600); it pays for the transactions`;

const SUBCOMMANDS = ["deploy", "status", "stake", "unlock-stake", "withdraw-stake", "deposit", "signers"];

async function main(): Promise<number> {
  let parsed: ReturnType<typeof parseArgs<{ options: typeof OPTION_TYPES; allowPositionals: true }>>;
  try {
    parsed = parseArgs({ options: OPTION_TYPES, allowPositionals: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const raw = parsed.values as RawOptions;
  const [subcommand, change, ...extra] = parsed.positionals;
  if (subcommand === undefined || !SUBCOMMANDS.includes(subcommand)) {
    throw new UsageError(subcommand === undefined ? "which subcommand?" : `unknown subcommand "${subcommand}"`);
  }
  const signersChange = subcommand === "signers" ? change : undefined;
  if (subcommand === "signers" && signersChange !== "add" && signersChange !== "remove") {
    throw new UsageError("signers needs add or remove: signers add --signer ADDRESS …");
  }
  if (extra.length > 0 || (subcommand !== "signers" && change !== undefined)) {
    throw new UsageError(`unexpected argument "${[change, ...extra].filter(Boolean).join(" ")}"`);
  }
  checkOptions(subcommand, raw);
  const report = reporter(raw.json === true);
  const node = await connect(rpcUrl(raw));
  report.say(`chain ${node.chainId} at ${node.rpcUrl}`);

  if (subcommand === "status") {
    const result = await status(node, serviceSide(), raw, report);
    if (report.json) console.log(JSON.stringify(result, null, 2));
    return result.ok ? 0 : 1;
  }
  const dryRun = raw["dry-run"] === true;
  const wallet = ownerWallet(node, required(raw, "key-file"));
  const owner = wallet.account.address;
  const transactions: SentTransaction[] = [];
  const sendOne = async (what: string, to: Address, data: Hex, value?: bigint) => {
    const sent = await send(
      node,
      wallet,
      { what, to, data, ...(value === undefined ? {} : { value }) },
      report,
      dryRun,
    );
    if (sent) transactions.push(sent);
    return sent;
  };

  if (subcommand === "deploy") {
    const result = await deploy(node, wallet, address(raw, "owner"), serviceSide(), raw, report);
    // The last line (or the whole of --json) is the chains-file entry, ready to paste.
    console.log(report.json ? JSON.stringify(result.entry, null, 2) : JSON.stringify(result.entry));
    return 0;
  }
  const versions = entryPointVersions(raw);
  const owned = (fallbackKinds: typeof OUR_PAYMASTER_KINDS) =>
    ownedTargets(node.publicClient, owner, versions, kinds(raw, fallbackKinds), report.say);
  if (subcommand === "stake") {
    const [wei, delay] = [amount(raw), unstakeDelay(raw)];
    await stake(node, await owned(OUR_PAYMASTER_KINDS), wei, delay, report, sendOne);
  } else if (subcommand === "unlock-stake") {
    await unlockStake(node, await owned(OUR_PAYMASTER_KINDS), report, sendOne);
  } else if (subcommand === "withdraw-stake") {
    const to = address(raw, "to");
    await withdrawStake(node, await owned(OUR_PAYMASTER_KINDS), to, report, sendOne);
  } else if (subcommand === "deposit") {
    const wei = amount(raw);
    await deposit(await owned(["token", "permitToken"]), wei, sendOne);
  } else {
    const signer = address(raw, "signer");
    await changeSigners(
      node,
      await owned(OUR_PAYMASTER_KINDS),
      signersChange as "add" | "remove",
      signer,
      report,
      sendOne,
    );
  }
  finish(report, transactions, dryRun);
  return 0;
}

/** Every option the subcommand reads, checked before the node is asked anything, so a typo costs nothing. */
function checkOptions(subcommand: string, raw: RawOptions): void {
  rpcUrl(raw);
  entryPointVersions(raw);
  kinds(raw, OUR_PAYMASTER_KINDS);
  if (subcommand === "status") return;
  required(raw, "key-file");
  if (subcommand === "deploy") address(raw, "owner");
  if (subcommand === "stake") unstakeDelay(raw);
  if (subcommand === "stake" || subcommand === "deposit") amount(raw);
  if (subcommand === "withdraw-stake") address(raw, "to");
  if (subcommand === "signers") address(raw, "signer");
}

function finish(report: Reporter, transactions: readonly SentTransaction[], dryRun: boolean): void {
  if (!dryRun && transactions.length === 0) report.say("nothing to send: already done");
  if (report.json) console.log(JSON.stringify({ transactions }, null, 2));
}

main().then(
  (code) => process.exit(code),
  (error) => {
    if (error instanceof UsageError) {
      console.error(`${error.message}\n${USAGE}`);
      process.exit(2);
    }
    const known = error instanceof CommandError || error instanceof ConfigError;
    console.error(known ? error.message : `failed: ${firstLine(error)}; run \`status\` to see the state of the chain`);
    process.exit(1);
  },
);
