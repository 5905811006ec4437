// The L1 data fee of a chain: on rollups every transaction also pays for its bytes on L1, and a bundler gets that back
// only through preVerificationGas. Which model a chain uses, as the chains file says (`l1DataFee`) or, when it is
// silent, as the chain id says. The lists are facts about public networks; a chain not listed pays no L1 fee.
import Type, { type Static } from "typebox";
import { Address } from "../primitives";
import { described } from "./problems";

/** The models the service computes itself. */
export const L1_DATA_FEE_MODELS = ["none", "op-stack", "arbitrum"] as const;
export type L1DataFeeModelName = (typeof L1_DATA_FEE_MODELS)[number];

/** OP stack: the GasPriceOracle predeploy answers getL1Fee(bytes) and, since Isthmus, getOperatorFee(uint256). */
export const OP_STACK_GAS_PRICE_ORACLE = "0x420000000000000000000000000000000000000f";
/** Arbitrum: NodeInterface, a virtual contract the node answers in eth_call (gasEstimateL1Component). */
export const ARBITRUM_NODE_INTERFACE = "0x00000000000000000000000000000000000000c8";

/**
 * The margin over the fee read, in percent. OP stack: the L1 base fee and blob fee move between signing and inclusion
 * and preVerificationGas is paid in full, never refunded, so a quarter covers a few minutes of drift without paying
 * the 2.3× of getL1FeeUpperBound. Arbitrum: a fifth; its bundlers accept 95 % of their own reading.
 */
export const DEFAULT_L1_MARGIN_PERCENT: Record<Exclude<L1DataFeeModelName, "none">, number> = {
  "op-stack": 25,
  arbitrum: 20,
};

const OP_STACK_CHAIN_IDS: ReadonlyMap<number, string> = new Map([
  [10, "OP Mainnet"],
  [11155420, "OP Sepolia"],
  [8453, "Base"],
  [84532, "Base Sepolia"],
  [130, "Unichain"],
  [1301, "Unichain Sepolia"],
  [480, "World Chain"],
  [4801, "World Chain Sepolia"],
  [57073, "Ink"],
  [1868, "Soneium"],
  [34443, "Mode"],
  [7777777, "Zora"],
]);

const ARBITRUM_CHAIN_IDS: ReadonlyMap<number, string> = new Map([
  [42161, "Arbitrum One"],
  [42170, "Arbitrum Nova"],
  [421614, "Arbitrum Sepolia"],
]);

/** Rollups whose L1 fee follows a model of their own that the service does not compute (no open bundler does either). */
const OWN_MODEL_CHAIN_IDS: ReadonlyMap<number, string> = new Map([
  [534352, "Scroll"],
  [534351, "Scroll Sepolia"],
  [5000, "Mantle"],
  [5003, "Mantle Sepolia"],
]);

/** The model a chain id implies when the chains file names none. */
export type ImpliedModel = { model: L1DataFeeModelName; network?: string } | { model: "unsupported"; network: string };

export function impliedL1DataFeeModel(chainId: number): ImpliedModel {
  const op = OP_STACK_CHAIN_IDS.get(chainId);
  if (op) return { model: "op-stack", network: op };
  const arbitrum = ARBITRUM_CHAIN_IDS.get(chainId);
  if (arbitrum) return { model: "arbitrum", network: arbitrum };
  const own = OWN_MODEL_CHAIN_IDS.get(chainId);
  if (own) return { model: "unsupported", network: own };
  return { model: "none" };
}

const L1_DATA_FEE_FORMS =
  '"none", "op-stack", "arbitrum", or {"model": "op-stack" | "arbitrum" | "none", "oracle"?: "0x…", "marginPercent"?: n}';

const ModelName = Type.Union(
  L1_DATA_FEE_MODELS.map((name) => Type.Literal(name)),
  { description: 'one of "none", "op-stack" and "arbitrum"' },
);

/** The chains file's `l1DataFee`: a model's name, or the model with its oracle and margin. */
export const L1DataFeeSchema = Type.Union(
  [
    ModelName,
    Type.Object(
      {
        model: ModelName,
        oracle: Type.Optional(described(Address, "a 20-byte hex address (0x and 40 hex digits)")),
        marginPercent: Type.Optional(
          Type.Integer({ minimum: 0, maximum: 200, description: "a whole number of percent from 0 to 200" }),
        ),
      },
      { additionalProperties: false },
    ),
  ],
  { description: L1_DATA_FEE_FORMS },
);

export type L1DataFeeEntry = Static<typeof L1DataFeeSchema>;
