// Compiles every contracts/*.sol with the npm solc (pinned in package-lock) and writes one artifact per contract we own
// to contracts/artifacts/<Name>.json. The artifacts are committed: the service and the tests never need a compiler, and
// the CREATE2 address of the paymaster follows from the committed bytecode alone.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import solc from "solc";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const contractsDir = join(root, "contracts");
const artifactsDir = join(contractsDir, "artifacts");

// Every setting here changes the bytecode, hence the paymaster's deterministic address; change them deliberately.
const settings = {
  optimizer: { enabled: true, runs: 200 },
  // paris: no PUSH0, so the same bytecode (and address) deploys on chains that have not adopted Shanghai.
  evmVersion: "paris",
  // No metadata hash: editing a comment must not move the CREATE2 address. The compiler version stays in the CBOR tail.
  metadata: { bytecodeHash: "none" },
  outputSelection: { "*": { "*": ["abi", "evm.bytecode.object", "evm.deployedBytecode.object"] } },
};

interface SolcError {
  severity: "error" | "warning" | "info";
  formattedMessage: string;
}
interface SolcContract {
  abi: unknown[];
  evm: { bytecode: { object: string }; deployedBytecode: { object: string } };
}
interface SolcOutput {
  errors?: SolcError[];
  contracts?: Record<string, Record<string, SolcContract>>;
}

/** Imports such as `@openzeppelin/...` resolve from node_modules; solc normalises relative imports before asking. */
function findImport(path: string): { contents: string } | { error: string } {
  for (const candidate of [join(root, path), join(root, "node_modules", path)]) {
    if (existsSync(candidate)) return { contents: readFileSync(candidate, "utf8") };
  }
  return { error: `not found: ${path}` };
}

function main(): void {
  const files = readdirSync(contractsDir).filter((name) => name.endsWith(".sol"));
  if (files.length === 0) throw new Error(`no .sol files in ${contractsDir}`);
  // Source unit names are repository-relative so that they, and so the bytecode, do not depend on the checkout path.
  const sources = Object.fromEntries(
    files.map((name) => [`contracts/${name}`, { content: readFileSync(join(contractsDir, name), "utf8") }]),
  );
  const output = JSON.parse(
    solc.compile(JSON.stringify({ language: "Solidity", sources, settings }), { import: findImport }),
  ) as SolcOutput;

  const problems = output.errors ?? [];
  for (const problem of problems) console.error(problem.formattedMessage);
  if (problems.some((problem) => problem.severity === "error")) process.exit(1);

  // Stale artifacts of renamed or deleted contracts would otherwise linger and be loaded.
  rmSync(artifactsDir, { recursive: true, force: true });
  mkdirSync(artifactsDir, { recursive: true });
  for (const [sourceName, contracts] of Object.entries(output.contracts ?? {})) {
    if (!(sourceName in sources)) continue; // a library we imported, not ours
    for (const [contractName, contract] of Object.entries(contracts)) {
      if (contract.evm.bytecode.object === "") continue; // interface or abstract: nothing to deploy
      const artifact = {
        contractName,
        abi: contract.abi,
        bytecode: `0x${contract.evm.bytecode.object}`,
        deployedBytecode: `0x${contract.evm.deployedBytecode.object}`,
      };
      writeFileSync(join(artifactsDir, `${contractName}.json`), `${JSON.stringify(artifact, null, 2)}\n`);
      console.log(
        `${contractName}: ${contract.evm.deployedBytecode.object.length / 2} bytes deployed (solc ${solc.version()})`,
      );
    }
  }
}

main();
