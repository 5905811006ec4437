// The ERC20-mode contracts from contracts/artifacts (built by scripts/build-contracts.ts and committed): the token
// paymaster, and the test token and fixed-price aggregator only the embedded local chain deploys. Kept apart from
// artifacts.ts so that the sponsored mode's module stays as it is.
import { createRequire } from "node:module";
import { type Abi, isHex } from "viem";
import { fixedPriceAggregatorAbi } from "../../contracts/artifacts/FixedPriceAggregator.abi";
import { testTokenAbi } from "../../contracts/artifacts/TestToken.abi";
import { tokenPaymasterAbi } from "../../contracts/artifacts/TokenPaymaster.abi";
import type { Artifact } from "./artifacts";

const require = createRequire(import.meta.url);

/** The committed JSON with the typed ABI module beside it; a truncated or hand-edited file fails here, not on chain. */
function load<TAbi extends Abi>(contractName: string, abi: TAbi): Artifact<TAbi> {
  const raw = require(`../../contracts/artifacts/${contractName}.json`) as Record<string, unknown>;
  const { bytecode, deployedBytecode } = raw;
  if (raw.contractName !== contractName || !isHex(bytecode) || bytecode.length <= 2 || !isHex(deployedBytecode)) {
    throw new Error(`contracts/artifacts/${contractName}.json is not the artifact of ${contractName}`);
  }
  return { contractName, abi, bytecode, deployedBytecode };
}

export const tokenPaymasterArtifact = load("TokenPaymaster", tokenPaymasterAbi);
export const testTokenArtifact = load("TestToken", testTokenAbi);
export const fixedPriceAggregatorArtifact = load("FixedPriceAggregator", fixedPriceAggregatorAbi);
