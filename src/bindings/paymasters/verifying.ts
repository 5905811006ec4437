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

export const verifyingPaymaster: PaymasterKind<SponsorshipTerms> = {
  mode: "SPONSORED",
  holdsDeposit: true,
  signsBlockWindows: true,
  rules: (sponsoredRules) => sponsoredRules,
  // The first rule passed only with a funding wallet linked: it is the paymasterId whose deposit pays on chain.
  terms: (setup, window) => ({ paymasterId: setup.fundingAddress as Address, ...window }),
  hashedTerms: verifyingHashedTerms,
  encodeData: (terms, signature) => `0x${verifyingPaymasterDataWords({ ...terms, signature })}`,
  encodeTermsAlone: (terms) => `0x${verifyingTermsAloneWords(terms)}`,
  gasLimits: paymasterGasLimitsV07,
};
