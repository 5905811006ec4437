import type { SponsoringChain } from "../chain/sponsoringChains";

/** A chain's L1 data fee model as GET chains and /readyz show it; a chain without one says "none". */
export interface L1DataFeeView {
  model: "none" | "op-stack" | "arbitrum" | "bundler";
  /** Where the model came from: the chains file, or the chain id's known network. */
  source: "chains file" | "chain id";
  /** op-stack and arbitrum: the contract the fee is read from. */
  oracle?: string;
  /** op-stack and arbitrum: the margin added over the fee read. */
  marginPercent?: number;
  /** bundler: the network whose own model only the chain's bundler prices. */
  network?: string;
}

export function l1DataFeeView(chain: SponsoringChain): L1DataFeeView {
  const model = chain.l1DataFee;
  if (!model) return { model: "none", source: "chain id" };
  return { ...model };
}
