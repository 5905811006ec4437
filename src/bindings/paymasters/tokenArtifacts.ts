// The ERC20-mode contracts from contracts/artifacts (built by scripts/build-contracts.ts and committed): the token
// paymasters (TokenPaymaster for EntryPoint v0.6, TokenPaymasterV07 for v0.7 and later, PermitTokenPaymasterV07, which
// charges up front, for v0.7 and later), and the test tokens and fixed-price aggregator only the embedded local chain
// deploys. Kept apart from artifacts.ts so that the sponsored mode's module stays as it is.
import { fixedPriceAggregatorAbi } from "../../../contracts/artifacts/FixedPriceAggregator.abi";
import fixedPriceAggregatorJson from "../../../contracts/artifacts/FixedPriceAggregator.json" with { type: "json" };
import { permitTestTokenAbi } from "../../../contracts/artifacts/PermitTestToken.abi";
import permitTestTokenJson from "../../../contracts/artifacts/PermitTestToken.json" with { type: "json" };
import { permitTokenPaymasterV07Abi } from "../../../contracts/artifacts/PermitTokenPaymasterV07.abi";
import permitTokenPaymasterV07Json from "../../../contracts/artifacts/PermitTokenPaymasterV07.json" with {
  type: "json",
};
import { testTokenAbi } from "../../../contracts/artifacts/TestToken.abi";
import testTokenJson from "../../../contracts/artifacts/TestToken.json" with { type: "json" };
import { tokenPaymasterAbi } from "../../../contracts/artifacts/TokenPaymaster.abi";
import tokenPaymasterJson from "../../../contracts/artifacts/TokenPaymaster.json" with { type: "json" };
import { tokenPaymasterV07Abi } from "../../../contracts/artifacts/TokenPaymasterV07.abi";
import tokenPaymasterV07Json from "../../../contracts/artifacts/TokenPaymasterV07.json" with { type: "json" };
import { loadOwnArtifact as load } from "./ownArtifact";

export const tokenPaymasterArtifact = load(tokenPaymasterJson, "TokenPaymaster", tokenPaymasterAbi);
/** The token paymaster for EntryPoint v0.7 and v0.8 (one deployment per EntryPoint). */
export const tokenPaymasterV07Artifact = load(tokenPaymasterV07Json, "TokenPaymasterV07", tokenPaymasterV07Abi);
/** The token paymaster that takes the maximum charge in validation, with an optional permit (v0.7 and later). */
export const permitTokenPaymasterV07Artifact = load(
  permitTokenPaymasterV07Json,
  "PermitTokenPaymasterV07",
  permitTokenPaymasterV07Abi,
);
export const testTokenArtifact = load(testTokenJson, "TestToken", testTokenAbi);
/** The local chain's USDC-like fee token: a permit that runs in validation, ERC-1271, EIP-5267. */
export const permitTestTokenArtifact = load(permitTestTokenJson, "PermitTestToken", permitTestTokenAbi);
export const fixedPriceAggregatorArtifact = load(
  fixedPriceAggregatorJson,
  "FixedPriceAggregator",
  fixedPriceAggregatorAbi,
);
