// The signer set every paymaster of ours inherits (contracts/SignerSet.sol): the owner adds and removes the keys whose
// signatures the paymaster accepts. One ABI for the four contracts, so that whoever reads or changes the set (the local
// chain, the contracts command, the network checks) need not know which paymaster it holds.
import { parseAbi } from "viem";

export const signerSetAbi = parseAbi([
  "function isSigner(address signer) view returns (bool)",
  "function signerCount() view returns (uint256)",
  "function owner() view returns (address)",
  "function addSigner(address signer)",
  "function removeSigner(address signer)",
  "event SignerAdded(address indexed signer)",
  "event SignerRemoved(address indexed signer)",
]);

/** addSigner and removeSigner write two slots and emit one event: well under this on any chain we know. */
export const SIGNER_CHANGE_GAS = 100_000n;
