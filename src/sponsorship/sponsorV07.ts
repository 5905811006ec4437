import type { Address, Hex } from "viem";
import type { SponsoringChain } from "../chain/sponsoringChains";
import type { SmartAccountInfo } from "./callData";
import { decideSignRecord } from "./decideSignRecord";
import { getUserOpHashV07, packUserOperation, type UserOperationV07 } from "./entryPoints/userOperationV07";
import { maxDepositCharge } from "./operationView";
import type { PartialUserOperationV07 } from "./partialUserOperationV07";
import {
  encodeVerifyingPaymasterDataV07,
  getVerifyingPaymasterHashV07,
  type PaymasterGasLimits,
} from "./paymasters/paymasterAndDataV07";
import type { SponsorshipSetup } from "./setup";
import type { SponsorDeps } from "./sponsor";

/** A v0.7/v0.8 operation with every field our signature covers, the paymaster's two gas limits included. */
export type SignableUserOperationV07 = PartialUserOperationV07 &
  Required<
    Pick<
      PartialUserOperationV07,
      | "callGasLimit"
      | "verificationGasLimit"
      | "preVerificationGas"
      | "maxFeePerGas"
      | "maxPriorityFeePerGas"
      | "paymasterVerificationGasLimit"
      | "paymasterPostOpGasLimit"
    >
  >;

export interface SponsorRequestV07 {
  setup: SponsorshipSetup;
  chain: SponsoringChain;
  /** The EntryPoint the request named and our verifying paymaster for it (src/chain/sponsoringChains.ts). */
  entryPoint: Address;
  paymaster: Address;
  userOp: SignableUserOperationV07;
  expirySeconds: number;
  smartAccount?: SmartAccountInfo;
  webhookData?: Record<string, unknown>;
}

export interface SponsorAnswerV07 extends PaymasterGasLimits {
  paymaster: Address;
  /** Our part of paymasterAndData (ERC-7677's paymasterData); `0x` when refused. */
  paymasterData: Hex;
  callGasLimit: bigint;
  verificationGasLimit: bigint;
  preVerificationGas: bigint;
  reason?: string;
  /** When refused: the rule that refused (a fixed name, for metrics and logs). */
  refusedBy?: string;
}

/**
 * sponsor() for EntryPoint v0.7 and v0.8: the same rules decide (they read the operation through operationView), and
 * what the rules allow is signed with VerifyingPaymasterV07's hash and recorded before it is answered. The record has
 * the fields of a v0.6 one: the EntryPoint's userOpHash of the operation as it will be sent (our paymaster fields in,
 * no account signature), the sender and nonce, and the most the operation can take from the dApp's deposit in this
 * version's paymaster.
 */
export async function sponsorV07(deps: SponsorDeps, request: SponsorRequestV07): Promise<SponsorAnswerV07> {
  const { setup, chain, userOp, paymaster } = request;
  const gas = {
    callGasLimit: userOp.callGasLimit,
    verificationGasLimit: userOp.verificationGasLimit,
    preVerificationGas: userOp.preVerificationGas,
  };
  const paymasterGas = {
    paymasterVerificationGasLimit: userOp.paymasterVerificationGasLimit,
    paymasterPostOpGasLimit: userOp.paymasterPostOpGasLimit,
  };
  const record = {
    paymasterId: setup.paymasterId,
    chainId: chain.chainId,
    sender: userOp.sender,
    nonce: userOp.nonce,
    ...gas,
    maxFeePerGas: userOp.maxFeePerGas,
    maxPriorityFeePerGas: userOp.maxPriorityFeePerGas,
    ...(setup.fundingAddress ? { fundingAddress: setup.fundingAddress } : {}),
    paymasterAddress: paymaster,
    entryPoint: request.entryPoint,
    mode: "SPONSORED" as const,
  };
  const outcome = await decideSignRecord(
    deps,
    { ...request, record, worstCaseWei: maxDepositCharge(userOp), nowMs: (deps.now ?? Date.now)() },
    async (terms) => {
      const complete: UserOperationV07 = { ...userOp, signature: "0x" };
      const hash = getVerifyingPaymasterHashV07(packUserOperation(complete), {
        ...terms,
        ...paymasterGas,
        chainId: chain.chainId,
        paymaster,
      });
      const signature = await deps.signer.signHash(hash);
      const paymasterData = encodeVerifyingPaymasterDataV07({ ...terms, signature });
      const userOpHash = getUserOpHashV07(
        { ...complete, paymaster, ...paymasterGas, paymasterData },
        request.entryPoint,
        chain.chainId,
        userOp.entryPointVersion,
      );
      return { payload: paymasterData, userOpHash };
    },
  );
  if (!outcome.sponsored) {
    return {
      paymaster,
      paymasterData: "0x",
      ...paymasterGas,
      ...gas,
      reason: outcome.reason,
      ...(outcome.refusedBy ? { refusedBy: outcome.refusedBy } : {}),
    };
  }
  return { paymaster, paymasterData: outcome.payload, ...paymasterGas, ...gas };
}
