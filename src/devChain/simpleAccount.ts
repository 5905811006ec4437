import { parseAbi } from "viem";

/**
 * The reference account of EntryPoint v0.6 (eth-infinitism SimpleAccount) and its factory: what local chains and tests
 * use as a smart account. Const ABIs so viem types the calls; test/chain checks them against the npm artifacts.
 */
export const simpleAccountAbi = parseAbi([
  "function execute(address dest, uint256 value, bytes func)",
  "function executeBatch(address[] dest, bytes[] func)",
  "function owner() view returns (address)",
  "function entryPoint() view returns (address)",
]);

export const simpleAccountFactoryAbi = parseAbi([
  "function createAccount(address owner, uint256 salt) returns (address ret)",
  "function getAddress(address owner, uint256 salt) view returns (address)",
  "function accountImplementation() view returns (address)",
]);
