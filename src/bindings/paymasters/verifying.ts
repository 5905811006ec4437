// Our verifying paymaster as a paymaster kind (paymasterKind.ts): the dApp's deposit pays, SPONSORED mode's rules
// decide, and the signature commits to the funding wallet (the on-chain paymasterId) and the window.
import type { Address } from "viem";
import {
  type SponsorshipTerms,
  verifyingHashedTerms,
  verifyingPaymasterDataWords,
  verifyingTermsAloneWords,
} from "./paymasterAndData";
import type { PaymasterKind } from "./paymasterKind";
import { paymasterGasLimitsV07 } from "./verifyingPaymasterGasV07";

/** Whose deposit a stub names before a funding wallet is linked (the rules then refuse; the stub keeps its length). */
const PLACEHOLDER_PAYMASTER_ID: Address = "0x1111111111111111111111111111111111111111";

export const verifyingPaymaster: PaymasterKind<SponsorshipTerms> = {
  mode: "SPONSORED",
  contractName: "verifying paymaster",
  holdsDeposit: true,
  signsBlockWindows: true,
  rules: (sponsoredRules) => sponsoredRules,
  stubRules: (cheapRules) => cheapRules,
  // The dApp's deposit pays: a refusal is an answer (`0x` and the reason), which the wallet may act on.
  refusalIsError: false,
  validationReadsSender: false,
  // Its postOp only gives back what validation took over the real cost, within the overhead the prefund counts.
  postOpGasFromVerification: 0n,
  // The signing rules pass only with a funding wallet linked: it is the paymasterId whose deposit pays on chain. A stub
  // before that names a placeholder of the same length.
  terms: (setup, window) => ({ paymasterId: setup.fundingAddress ?? PLACEHOLDER_PAYMASTER_ID, ...window }),
  hashedTerms: verifyingHashedTerms,
  encodeData: (terms, signature) => `0x${verifyingPaymasterDataWords({ ...terms, signature })}`,
  encodeTermsAlone: (terms) => `0x${verifyingTermsAloneWords(terms)}`,
  gasLimits: paymasterGasLimitsV07,
};
