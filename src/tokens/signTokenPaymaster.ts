import type { Hex } from "viem";
import { maxChargeWei } from "../chain/paymasterDeposit";
import type { TokenConfig } from "../config";
import { getUserOpHash } from "../sponsorship/entryPoints/userOpHash";
import {
  encodeTokenPaymasterAndData,
  getTokenPaymasterHash,
  maxTokenCost,
  type TokenFeeTerms,
} from "../sponsorship/paymasters/tokenPaymasterAndData";
import type { SponsorshipSetup } from "../sponsorship/setup";
import type { SignableUserOperation, SponsorDeps } from "../sponsorship/sponsor";
import { erc20Outcome, requireBalance, type TokenChain } from "./erc20Terms";

export interface TokenSignRequest {
  setup: SponsorshipSetup;
  chain: TokenChain;
  token: TokenConfig;
  terms: TokenFeeTerms;
  userOp: SignableUserOperation;
}

/**
 * ERC20 mode's decision and signature: the sender must hold the operation's maximum charge in the fee token, then the
 * token paymaster's 278-byte paymasterAndData is signed over the terms and recorded. None of SPONSORED mode's rules
 * apply: no funding wallet, policy, spending limit or webhook is consulted, since the user pays.
 */
export async function signTokenPaymaster(
  deps: SponsorDeps,
  request: TokenSignRequest,
  log: { warn(object: object, message: string): void },
): Promise<Hex> {
  const { chain, token, terms, userOp } = request;
  const maximum = maxTokenCost(userOp, terms.exchangeRate, terms.priceMarkup);
  await requireBalance(chain, token, userOp.sender, maximum, log);

  const paymaster = chain.tokenPaymaster;
  const hash = getTokenPaymasterHash(userOp, { ...terms, chainId: chain.chainId, paymaster });
  const paymasterAndData = encodeTokenPaymasterAndData({
    ...terms,
    paymaster,
    signature: await deps.signer.signHash(hash),
  });
  // Every signature the service gives out is on record (the user pays, so no deposit is held against it).
  await deps.log.record({
    paymasterId: request.setup.paymasterId,
    chainId: chain.chainId,
    sender: userOp.sender,
    nonce: userOp.nonce,
    sponsored: true,
    userOpHash: getUserOpHash({ ...userOp, paymasterAndData }, chain.entryPoint, chain.chainId),
    callGasLimit: userOp.callGasLimit,
    verificationGasLimit: userOp.verificationGasLimit,
    preVerificationGas: userOp.preVerificationGas,
    maxFeePerGas: userOp.maxFeePerGas,
    maxPriorityFeePerGas: userOp.maxPriorityFeePerGas,
    validUntil: terms.validUntil,
    validAfter: terms.validAfter,
    paymasterAddress: paymaster,
    entryPoint: chain.entryPoint,
    mode: "ERC20",
    worstCaseWei: maxChargeWei(userOp),
    ruleOutcomes: [erc20Outcome(token, terms, maximum)],
  });
  return paymasterAndData;
}
