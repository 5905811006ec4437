// ERC20 mode on EntryPoint v0.7 and later, where the chain has an up-front token paymaster (PermitTokenPaymasterV07)
// beside the approve-in-batch one: the up-front kind (src/bindings/paymasters/permitToken.ts) is chosen when the
// operation can pay before its call runs, that is when the context carries a permit, or when the sender's allowance to
// the up-front paymaster already covers the maximum charge. Otherwise the approve-in-batch token paymaster serves, as
// before (tokenKind.ts); its ERC-7677 stub then also offers, when the token has a permit that runs in validation, the
// Permit for the up-front paymaster to sign (`permitTypedData`), which the wallet sends back in the context.
import type { Address, Hex } from "viem";
import { ENTRY_POINT_VERSIONS, type LaterEntryPointVersion } from "../../bindings/entryPoints/versions";
import { permitTokenPaymaster, permitTokenPaymasterGasLimits } from "../../bindings/paymasters/permitToken";
import { permitTypedData } from "../../bindings/paymasters/permitTypedData";
import { maxTokenCost } from "../../bindings/paymasters/token";
import type { TokenFeeTerms } from "../../bindings/paymasters/tokenPaymasterAndData";
import { chainClient } from "../../chain/chainClient";
import type { TokenConfig } from "../../config";
import type { PartialUserOperationV07 } from "../../sponsorship/partialUserOperationV07";
import { tokenBalanceRule } from "../../sponsorship/rules/tokenBalance";
import { tokenPermitRule } from "../../sponsorship/rules/tokenPermit";
import { FeeTokenRefusedError, feeToken, type TokenChain, termsNow, tokenChain } from "../../tokens/erc20Terms";
import { allowanceOf, permitDomain, permitNonce, tokenSignature } from "../../tokens/permit";
import type { ActionContext } from "../context";
import type { AnyPaymasterKind, KindChoice } from "../stepRequest";
import { type TokenRequest, tokenKind, tokenKindWithTerms } from "./tokenKind";

/** The permit a wallet sends in the context: `{ value, deadline, signature }`, the deadline the maximum. */
export interface ContextPermit {
  value: bigint;
  /** As sent: an ERC-6492 wrapper is kept for the check, taken off for the contract. */
  signature: Hex;
  /** Where the request names it (`params[3].permit`), for the errors that refuse it. */
  label: string;
}

/** Where the up-front token paymaster may serve the request instead of the approve-in-batch one. */
export interface UpFrontRequest {
  /** The EntryPoint's up-front token paymaster; undefined where the chain has none. */
  paymaster: Address | undefined;
  version: LaterEntryPointVersion;
  /** The operation as sent: its gas, where given, prices the maximum charge before it is estimated. */
  userOp: PartialUserOperationV07;
  /** The ERC-7677 stub, which offers a Permit to sign when the allowance is short. */
  forStub: boolean;
}

/**
 * The margin the offered Permit's value keeps above the maximum charge at the stub's figures, in percent: the gas the
 * bundler estimates after the stub, and the price, may both rise before pm_getPaymasterData. The paymaster takes only
 * the actual charge in the end; the rest of the allowance stays unused.
 */
const PERMIT_VALUE_MARGIN_PERCENT = 50n;

/**
 * The stub's figures for gas the operation does not carry yet (a wallet asks for the stub before estimating): enough
 * for a new smart account's deployment and a modest call, so that the Permit offered covers the operation once it is
 * estimated.
 */
const STUB_FIGURES = { verificationGasLimit: 1_000_000n, callGasLimit: 1_000_000n, preVerificationGas: 200_000n };

export function erc20Kind(request: TokenRequest & { permit?: ContextPermit }, upFront?: UpFrontRequest): KindChoice {
  const approveInBatch = tokenKind(request);
  if (!upFront) {
    if (request.permit) {
      throw new FeeTokenRefusedError(
        `${request.permit.label}: a permit is taken by the up-front token paymaster, on EntryPoint v0.7 and later only`,
      );
    }
    return approveInBatch;
  }
  return { ...approveInBatch, choose: (ctx) => chooseKind(ctx, request, upFront) };
}

async function chooseKind(
  ctx: ActionContext,
  request: TokenRequest & { permit?: ContextPermit },
  upFront: UpFrontRequest,
): Promise<AnyPaymasterKind> {
  const chain = tokenChain(ctx.chain);
  const token = feeToken(request.feeToken, chain, request.feeTokenLabel);
  const { permit } = request;
  const { paymaster } = upFront;
  if (permit && !token.permit) {
    throw new FeeTokenRefusedError(
      `${permit.label}: fee token ${token.symbol} (${token.address}) has no permit that runs in validation ` +
        "(the chains file marks such a token `permit: true`); approve the token paymaster in the batch instead",
    );
  }
  if (permit && !paymaster) {
    throw new FeeTokenRefusedError(
      `${permit.label}: chain ${chain.chainId} has no up-front token paymaster for EntryPoint v${upFront.version} ` +
        "(the chains file's permitTokenPaymaster); approve the token paymaster in the batch instead",
    );
  }
  const readable = chainClient(chain) !== undefined;
  if (permit && !readable) {
    throw new FeeTokenRefusedError(
      `${permit.label}: chain ${chain.chainId} has no RPC configured, so a permit cannot be checked before it is ` +
        "signed; approve the token paymaster in the batch instead",
    );
  }
  const terms = await termsNow(chain, token, ctx.deps.now(), request.expirySeconds);
  // Without a node the allowance cannot be read: the approve-in-batch paymaster serves, as before.
  if (!paymaster || !readable) return tokenKindWithTerms(ctx, chain, token, terms);
  const sender = upFront.userOp.sender;
  if (!permit) {
    const read = await Promise.all([
      atStubFigures(ctx, upFront),
      allowanceOf(chain, token.address as Address, sender, paymaster),
    ]).catch((error) => {
      ctx.log.warn({ chainId: chain.chainId, token: token.address, err: error }, "up-front allowance not read");
      return undefined;
    });
    const approveInBatch = tokenKindWithTerms(ctx, chain, token, terms);
    // Without a permit the approve-in-batch paymaster serves as before when the node does not answer now: that is no
    // reason to refuse what it would sign (and no Permit is offered, its nonce being unreadable too).
    if (read === undefined) return approveInBatch;
    const [figures, allowance] = read;
    const maximum = maxTokenCost(ENTRY_POINT_VERSIONS[upFront.version], figures, terms);
    if (allowance < maximum) {
      if (!(upFront.forStub && token.permit)) return approveInBatch;
      // The stub stays the approve-in-batch paymaster's, which the bundler can estimate as it is; beside it, the
      // Permit that lets the wallet pay up front instead, once signed and sent back in the context.
      const permitTypedData = await offeredPermit(chain, token, sender, paymaster, maximum);
      return { ...approveInBatch, stubExtras: { permitTypedData } };
    }
  }
  return upFrontKind(ctx, chain, token, paymaster, terms, permit);
}

function upFrontKind(
  ctx: ActionContext,
  chain: TokenChain,
  token: TokenConfig,
  paymaster: Address,
  terms: TokenFeeTerms,
  permit: ContextPermit | undefined,
): AnyPaymasterKind {
  const check = { chain, token, terms, log: ctx.log };
  const outstanding = ctx.deps.outstandingPermit;
  const grant = {
    chain,
    token,
    paymaster,
    ...(permit ? { permit } : {}),
    outstandingPermit: (sender: Address) =>
      outstanding
        ? outstanding(chain.chainId, sender, token.address, Math.floor(ctx.deps.now() / 1000))
        : Promise.resolve(false),
  };
  return permitTokenPaymaster({
    paymaster,
    // The contract hands the token the signature as the account will check it once deployed: no ERC-6492 wrapper.
    terms: permit ? { ...terms, permit: { value: permit.value, signature: tokenSignature(permit.signature) } } : terms,
    balanceRule: (sender, maximum) => tokenBalanceRule(check, sender, maximum),
    grantRule: (sender, maximum) => tokenPermitRule(grant, sender, maximum),
  });
}

/** The operation with the stub's figures where it carries no gas yet, and the up-front paymaster's own limits. */
async function atStubFigures(ctx: ActionContext, upFront: UpFrontRequest): Promise<PartialUserOperationV07> {
  const op = upFront.userOp;
  let maxFeePerGas = op.maxFeePerGas;
  if (maxFeePerGas === undefined) {
    // The chain's price now, doubled as bundlers' clients do, where the wallet has not chosen its fees yet.
    const client = chainClient(ctx.chain);
    maxFeePerGas = client ? (await client.getGasPrice()) * 2n : 0n;
  }
  return {
    ...op,
    verificationGasLimit: op.verificationGasLimit || STUB_FIGURES.verificationGasLimit,
    callGasLimit: op.callGasLimit || STUB_FIGURES.callGasLimit,
    preVerificationGas: op.preVerificationGas || STUB_FIGURES.preVerificationGas,
    maxFeePerGas,
    ...permitTokenPaymasterGasLimits(op),
  };
}

/**
 * The EIP-712 Permit the stub offers for viem's signTypedData (uint256 fields as decimal strings, JSON having no
 * bigint): the sender as owner, our up-front paymaster as spender, the maximum charge at the stub's figures plus the
 * margin, the token's nonce now, the maximum deadline, and the domain the token publishes.
 */
async function offeredPermit(chain: TokenChain, token: TokenConfig, owner: Address, spender: Address, maximum: bigint) {
  const address = token.address as Address;
  const [domain, nonce] = await Promise.all([permitDomain(chain, address), permitNonce(chain, address, owner)]);
  const value = (maximum * (100n + PERMIT_VALUE_MARGIN_PERCENT)) / 100n;
  const typed = permitTypedData(domain, { owner, spender, value, nonce });
  return {
    ...typed,
    message: {
      owner,
      spender,
      value: value.toString(),
      nonce: nonce.toString(),
      deadline: typed.message.deadline.toString(),
    },
  };
}
