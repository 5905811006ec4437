import { type Address, parseAbi } from "viem";

/** EntryPoint v0.6, at the same address on every chain (CREATE2 deployer, salt 0). */
export const ENTRY_POINT_V06_ADDRESS: Address = "0x5FF137D4b0FDCD49DcA30c7CF57E578a026d2789";

/**
 * The part of the EntryPoint v0.6 interface the service calls or decodes, as a const ABI so viem types every argument,
 * result and log. test/chain checks each item against the ABI in the npm artifact.
 */
export const entryPointAbi = parseAbi([
  "struct UserOperation { address sender; uint256 nonce; bytes initCode; bytes callData; uint256 callGasLimit; uint256 verificationGasLimit; uint256 preVerificationGas; uint256 maxFeePerGas; uint256 maxPriorityFeePerGas; bytes paymasterAndData; bytes signature; }",
  "function handleOps(UserOperation[] ops, address beneficiary)",
  "function simulateValidation(UserOperation userOp)",
  "function getUserOpHash(UserOperation userOp) view returns (bytes32)",
  "function getNonce(address sender, uint192 key) view returns (uint256 nonce)",
  "function getSenderAddress(bytes initCode)",
  "function balanceOf(address account) view returns (uint256)",
  "function depositTo(address account) payable",
  "event UserOperationEvent(bytes32 indexed userOpHash, address indexed sender, address indexed paymaster, uint256 nonce, bool success, uint256 actualGasCost, uint256 actualGasUsed)",
  "event UserOperationRevertReason(bytes32 indexed userOpHash, address indexed sender, uint256 nonce, bytes revertReason)",
  "event AccountDeployed(bytes32 indexed userOpHash, address indexed sender, address factory, address paymaster)",
  "error FailedOp(uint256 opIndex, string reason)",
  "error SenderAddressResult(address sender)",
]);
