// EntryPoint v0.7 and v0.8: their canonical addresses and the part of their interface the service and the tests use.
// Both take the same PackedUserOperation and share these signatures; v0.8 hashes the operation with EIP-712, which
// only changes what getUserOpHash returns.
import { type Address, parseAbi } from "viem";

/** EntryPoint v0.7, at the same address on every chain (CREATE2 deployer). */
export const ENTRY_POINT_V07_ADDRESS: Address = "0x0000000071727De22E5E9d8BAf0edAc6f37da032";
/** EntryPoint v0.8, at the same address on every chain (CREATE2 deployer). */
export const ENTRY_POINT_V08_ADDRESS: Address = "0x4337084D9E255Ff0702461CF8895CE9E3b5Ff108";

export const entryPointV07Abi = parseAbi([
  "struct PackedUserOperation { address sender; uint256 nonce; bytes initCode; bytes callData; bytes32 accountGasLimits; uint256 preVerificationGas; bytes32 gasFees; bytes paymasterAndData; bytes signature; }",
  "function handleOps(PackedUserOperation[] ops, address beneficiary)",
  "function getUserOpHash(PackedUserOperation userOp) view returns (bytes32)",
  "function getNonce(address sender, uint192 key) view returns (uint256 nonce)",
  "function balanceOf(address account) view returns (uint256)",
  "function depositTo(address account) payable",
  "event UserOperationEvent(bytes32 indexed userOpHash, address indexed sender, address indexed paymaster, uint256 nonce, bool success, uint256 actualGasCost, uint256 actualGasUsed)",
  "event UserOperationRevertReason(bytes32 indexed userOpHash, address indexed sender, uint256 nonce, bytes revertReason)",
  "event PostOpRevertReason(bytes32 indexed userOpHash, address indexed sender, uint256 nonce, bytes revertReason)",
  "event AccountDeployed(bytes32 indexed userOpHash, address indexed sender, address factory, address paymaster)",
  "error FailedOp(uint256 opIndex, string reason)",
  "error FailedOpWithRevert(uint256 opIndex, string reason, bytes inner)",
  "error PostOpReverted(bytes returnData)",
]);
