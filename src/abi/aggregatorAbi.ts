import { parseAbi } from "viem";

/**
 * The reads of a Chainlink-style price feed (AggregatorV3Interface) this service makes: fee-token prices (ERC20 mode)
 * and the native token's dollar price (USD rules).
 */
export const aggregatorAbi = parseAbi([
  "function latestRoundData() view returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)",
  "function decimals() view returns (uint8)",
]);
