// The test vector of docs/contracts.md, 'Test vector': checked on anvil against the hosted service's own verifying
// paymaster contract and the real EntryPoint v0.6, so it pins our layout and hash to theirs.
import { encodeFunctionData, type Hex, parseAbi } from "viem";
import type { UserOperationSignedFields } from "../../src/bindings/entryPoints/userOperation";
import type { VerifyingHashContext } from "../../src/bindings/paymasters/paymasterAndData";

export const vectorSignerKey: Hex = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";

// Biconomy account v2 single call; its 0x0000189a selector is what the vector signs over.
const biconomyAccountAbi = parseAbi(["function execute_ncC(address to, uint256 value, bytes data)"]);

export const vectorUserOp: UserOperationSignedFields = {
  sender: "0x4dF23B78543F5c2F9CBCDF09956288B3e97bb9a4",
  nonce: 8n,
  initCode: "0x",
  callData: encodeFunctionData({
    abi: biconomyAccountAbi,
    functionName: "execute_ncC",
    args: ["0x322af0da66d00be980c7aa006377fcaaeee3bdfd", 10_000_000_000_000_000n, "0x"],
  }),
  callGasLimit: 108_848n,
  verificationGasLimit: 57_121n,
  preVerificationGas: 75_388n,
  maxFeePerGas: 0xc02244n,
  maxPriorityFeePerGas: 0xf4240n,
};

export const vectorContext: VerifyingHashContext = {
  chainId: 80002,
  paymaster: "0x00000f79B7FaF42EEBAdbA19aCc07cD08Af44789",
  paymasterId: "0x7306ac7a32eb690232de81a9ffb44bb346026fab",
  validUntil: 1_700_000_300,
  validAfter: 1_700_000_000,
};

export const vectorHash: Hex = "0x4fb50eaffcbd5ec5bcab59a2034ba9a4d63114a4a7aebdeabbd9245666fc638b";
export const vectorSignature: Hex =
  "0xcbdf46516c1a7304232da5e3f016b6fdf3b612991f5333a08746dbc3f477fabe729d102cb07fa49299c796ce626c766010a4ad8368b6ff3c34e08ec22a1f46fe1b";
