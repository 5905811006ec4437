// What the sponsorship engine (src/sponsorship/engine.ts) needs to know of one of our paymaster contracts, whatever
// the EntryPoint version: which rules decide for it, what its signature commits to besides the operation, how its
// data is encoded, and its own gas. One implementation per kind: verifying.ts (the dApp's deposit pays), token.ts
// (the sender pays in an ERC-20 token, charged after the call) and permitToken.ts (charged before it, with a permit). The data's layout is the same for every version; where it goes is the
// version's business (src/bindings/entryPoints/entryPointVersion.ts).
import type { Address, Hex } from "viem";
import type { SponsoredUserOperation } from "../../sponsorship/partialUserOperationV07";
import type { Rule } from "../../sponsorship/rule";
import type { SponsorshipSetup } from "../../sponsorship/setup";
import type { LedgerMode } from "../../storage/sponsorships";
import type { EntryPointVersion } from "../entryPoints/entryPointVersion";
import type { PaymasterGasLimits } from "./paymasterAndDataV07";

/**
 * The validity window a signature gives an operation: unix seconds, or on an EntryPoint that reads them, block numbers
 * with bit 47 set on both ends (src/sponsorship/blockWindow.ts).
 */
export interface SigningWindow {
  validUntil: number;
  validAfter: number;
}

export interface PaymasterKind<Terms extends SigningWindow> {
  /** What the record says pays: SPONSORED, the dApp's deposit; ERC20, the sender in a token. */
  readonly mode: LedgerMode;
  /** The contract in words, for messages: "verifying paymaster", "token paymaster". */
  readonly contractName: string;
  /**
   * Whether a signature is held against the dApp's deposit until settled (the record's maxCharge, its funding
   * wallet): only when the deposit pays.
   */
  readonly holdsDeposit: boolean;
  /**
   * The rules that decide whether this paymaster signs the operation, in order: SPONSORED mode's (`sponsoredRules`,
   * the setup's) when the dApp pays, the kind's own checks otherwise.
   */
  rules<Op extends SponsoredUserOperation>(
    sponsoredRules: readonly Rule[],
    op: Op,
    version: EntryPointVersion<Op>,
  ): readonly Rule[];
  /**
   * The rules the ERC-7677 stub runs for this kind before the user signs, over the operation at its cheapest: none may
   * hold anything (src/sponsorship/eligibility.ts). `cheapRules` are SPONSORED mode's that spend nothing.
   */
  stubRules<Op extends SponsoredUserOperation>(
    cheapRules: readonly Rule[],
    op: Op,
    version: EntryPointVersion<Op>,
  ): readonly Rule[];
  /**
   * Whether a refusal is told only as an error: a kind whose user pays has no `0x` answer that a wallet would read as
   * "unsponsored, send it yourself" (ERC20 mode).
   */
  readonly refusalIsError: boolean;
  /**
   * The ERC-20 the kind takes its charge in, where the sender approves it first: a quote estimates the operation as
   * if the wallet's approve were there. Absent where the sender pays nothing.
   */
  readonly feeToken?: Address;
  /** Whether the contract's validation reads the sender's state (a token balance), so its refusal is the operation's. */
  readonly validationReadsSender: boolean;
  /**
   * The least verificationGasLimit an operation is signed with where the version runs postOp on that limit (v0.6,
   * whose prefund does not count postOp apart): what the contract's postOp needs; 0 for a kind with no postOp work.
   */
  readonly postOpGasFromVerification: bigint;
  /**
   * Whether the kind signs the window it is given in block numbers when the paymaster asks for it; a kind whose terms
   * carry their own window in seconds (a token price quote) does not.
   */
  readonly signsBlockWindows: boolean;
  /** The terms the signature commits to, for the window the rules passed (a kind may keep a narrower one). */
  terms(setup: SponsorshipSetup, window: SigningWindow): Terms;
  /** The terms as the contract hashes them after the version's prefix: hex digits without 0x. */
  hashedTerms(terms: Terms): string;
  /** The contract's paymasterData: the terms and the signature, the same bytes under every version. */
  encodeData(terms: Terms, signature: Hex): Hex;
  /**
   * paymasterData without a signature in it, for a kind whose v0.9 contract reads the signature from the suffix after
   * paymasterData (parallel signing); absent for a kind that signs sequentially only.
   */
  encodeTermsAlone?(terms: Terms): Hex;
  /**
   * The contract this kind signs for where it is not the one the request's EntryPoint gave (the up-front token
   * paymaster, chosen beside the approve-in-batch one once the price and the sender's allowance are read).
   */
  readonly paymaster?: Address;
  /**
   * Fields the kind adds to the ERC-7677 stub's answer: beside the approve-in-batch token paymaster's stub, the
   * up-front token paymaster's EIP-2612 Permit for the wallet to sign when the sender's allowance is short.
   */
  readonly stubExtras?: Readonly<Record<string, unknown>>;
  /** The paymaster gas limits to sign, for versions that have them (v0.7 on), from what the client sent. */
  gasLimits(given: { paymasterVerificationGasLimit?: bigint }): PaymasterGasLimits;
}
