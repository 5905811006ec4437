// Local chains that charge for L1 data as L2s do, for tests of the L1 part of preVerificationGas, offline:
//
//   - an OP-stack chain: anvil in its OP mode, which takes every transaction's L1 fee from the sender's balance into
//     the vault 0x4200…001A, beside gas. The fee follows L1Block's storage; GasPriceOracle's getL1Fee(bytes) answers
//     what the service reads. Both predeploys' code comes from test/fixtures/l2/ (see the README there).
//   - an Arbitrum chain: plain anvil on chain 42161 with our NodeInterfaceStandIn (contracts/test/) at 0x…C8, which
//     answers gasEstimateL1Component with figures the test sets. Nothing is charged for L1 there: on Arbitrum the L1
//     part is ordinary gas, and the stand-in only answers what a node would.
//
//   const op = await startOpStackChain({ blobBaseFee: parseGwei("300") });
//   const stacks = await deployPaymasterStacks(op, serviceSigner.address);
//   await op.setL1Fees({ blobBaseFee: parseGwei("600") });
//   after(() => op.anvil.stop());
//
// The chains are test/contracts/fixtures.ts's LocalChain, so that file's operation builders work on them unchanged.
import { readFileSync } from "node:fs";
import { type Address, type Hex, parseAbi, parseGwei, toHex, zeroAddress } from "viem";
import { nodeInterfaceStandInAbi } from "../../contracts/artifacts/NodeInterfaceStandIn.abi";
import nodeInterfaceStandIn from "../../contracts/artifacts/NodeInterfaceStandIn.json" with { type: "json" };
import type { LocalEntryPointStack } from "../../src/chain/localAddresses";
import { LATER_ENTRY_POINT_VERSIONS, type LaterEntryPointVersion } from "../../src/config";
import { sendTogether } from "../../src/devChain/localBatch";
import { deployAllLocalStacks, signerAdditions } from "../../src/devChain/localDeployment";
import { tokenPaymasterV07Funding } from "../../src/devChain/localTokenPaymastersV07";
import { anvilKeys, type LocalChain, startLocalChain } from "../contracts/fixtures";

export const GAS_PRICE_ORACLE_ADDRESS: Address = "0x420000000000000000000000000000000000000F";
export const L1_BLOCK_ADDRESS: Address = "0x4200000000000000000000000000000000000015";
/** Where anvil's OP mode puts the L1 fees it takes. */
export const L1_FEE_VAULT_ADDRESS: Address = "0x420000000000000000000000000000000000001A";
export const NODE_INTERFACE_ADDRESS: Address = "0x00000000000000000000000000000000000000C8";
/** The method as Arbitrum's NodeInterface declares it (payable), which bundlers call with eth_call. */
export const nodeInterfaceAbi = parseAbi([
  "function gasEstimateL1Component(address to, bool contractCreation, bytes data) payable returns (uint64 gasEstimateForL1, uint256 baseFee, uint256 l1BaseFeeEstimate)",
]);

export const gasPriceOracleAbi = parseAbi([
  "function getL1Fee(bytes data) view returns (uint256)",
  "function getL1GasUsed(bytes data) view returns (uint256)",
  "function getL1FeeUpperBound(uint256 unsignedTxSize) view returns (uint256)",
  "function isFjord() view returns (bool)",
  // Isthmus's; this GasPriceOracle (1.3.0) predates it and reverts.
  "function getOperatorFee(uint256 gasUsed) view returns (uint256)",
]);

/** What Ecotone's and Fjord's L1 fee reads from L1Block. */
export interface OpStackFees {
  l1BaseFee: bigint;
  blobBaseFee: bigint;
  baseFeeScalar: bigint;
  blobBaseFeeScalar: bigint;
}

/**
 * Realistic scalars, and a blob base fee high enough that the L1 part of an operation's preVerificationGas outweighs
 * the execution part (a first SimpleAccount operation: about 73,000 gas of L1 fee at anvil's 1.9 gwei, against some
 * 50,000), which is what a test of that part wants to see.
 */
export const DEFAULT_OP_STACK_FEES: Readonly<OpStackFees> = {
  l1BaseFee: parseGwei("10"),
  blobBaseFee: parseGwei("300"),
  baseFeeScalar: 2269n,
  blobBaseFeeScalar: 1_055_762n,
};

export interface OpStackChainOptions extends Partial<OpStackFees> {
  /** Default 10 (OP Mainnet). */
  chainId?: number;
}

export interface OpStackChain extends LocalChain {
  /** The figures L1Block holds now, read from the chain (so a snapshot's revert shows). */
  l1Fees(): Promise<OpStackFees>;
  /** Changes the figures given; the next transaction and call pay by them (no block is mined). */
  setL1Fees(changes: Partial<OpStackFees>): Promise<void>;
  /**
   * Isthmus's operator fee, `gasUsed × scalar / 1e6 + constant`, which anvil charges from L1Block's slot 8 while this
   * GasPriceOracle cannot report it. Zero unless a test sets it.
   */
  setOperatorFee(fee: { scalar: bigint; constant: bigint }): Promise<void>;
  /** GasPriceOracle's getL1Fee, as the service and bundlers ask it. */
  getL1Fee(data: Hex): Promise<bigint>;
  /**
   * Takes the GasPriceOracle's code away (getL1Fee then reverts, like a chain without it) or puts it back. anvil keeps
   * charging the L1 fee either way: it reads L1Block, not the oracle.
   */
  setGasPriceOracle(present: boolean): Promise<void>;
}

const OP_MODE_ARGS = ["--network", "optimism", "--hardfork", "isthmus"];
const fixtureCode = (name: string) =>
  readFileSync(new URL(`../fixtures/l2/${name}.deployed.hex`, import.meta.url), "utf8").trim() as Hex;
const slot = (index: number) => toHex(index, { size: 32 });
const word = (value: bigint) => toHex(value, { size: 32 });
/** What GasPriceOracle's slot 0 holds once Ecotone and Fjord are on (two bools packed: isEcotone, isFjord). */
const ECOTONE_AND_FJORD = word(0x0101n);

/** `current` with the figures `changes` gives: options carry other fields, and an undefined one keeps its figure. */
function merged<T extends object>(current: T, changes: Partial<T>): T {
  const result = { ...current };
  for (const key of Object.keys(current) as (keyof T)[]) {
    const value = changes[key];
    if (value !== undefined) result[key] = value as T[keyof T];
  }
  return result;
}

const l1BlockAbi = parseAbi([
  "function basefee() view returns (uint256)",
  "function blobBaseFee() view returns (uint256)",
  "function baseFeeScalar() view returns (uint32)",
  "function blobBaseFeeScalar() view returns (uint32)",
]);

export async function startOpStackChain(options: OpStackChainOptions = {}): Promise<OpStackChain> {
  const local = await startLocalChain({ chainId: options.chainId ?? 10, args: OP_MODE_ARGS });
  try {
    const setStorage = (address: Address, index: number, value: Hex) =>
      local.testClient.setStorageAt({ address, index: slot(index), value });
    const setGasPriceOracle = async (present: boolean) => {
      await local.testClient.setCode({
        address: GAS_PRICE_ORACLE_ADDRESS,
        bytecode: present ? fixtureCode("GasPriceOracle") : "0x",
      });
      if (present) await setStorage(GAS_PRICE_ORACLE_ADDRESS, 0, ECOTONE_AND_FJORD);
    };
    const l1Fees = async (): Promise<OpStackFees> => {
      const read = (functionName: (typeof l1BlockAbi)[number]["name"]) =>
        local.publicClient.readContract({ address: L1_BLOCK_ADDRESS, abi: l1BlockAbi, functionName }).then(BigInt);
      const [l1BaseFee, blobBaseFee, baseFeeScalar, blobBaseFeeScalar] = await Promise.all(
        (["basefee", "blobBaseFee", "baseFeeScalar", "blobBaseFeeScalar"] as const).map(read),
      );
      return { l1BaseFee, blobBaseFee, baseFeeScalar, blobBaseFeeScalar } as OpStackFees;
    };
    // L1Block's layout (contracts-bedrock 0.17.3): slot 1 basefee; slot 3 packs sequenceNumber (bits 0-63, kept at 1),
    // blobBaseFeeScalar (64-95) and baseFeeScalar (96-127); slot 7 blobBaseFee.
    const writeL1Fees = async (fees: OpStackFees) => {
      await setStorage(L1_BLOCK_ADDRESS, 1, word(fees.l1BaseFee));
      await setStorage(L1_BLOCK_ADDRESS, 3, word((fees.baseFeeScalar << 96n) | (fees.blobBaseFeeScalar << 64n) | 1n));
      await setStorage(L1_BLOCK_ADDRESS, 7, word(fees.blobBaseFee));
    };
    // Slot 8 as op-revm reads it since Isthmus: the scalar in bits 64-95, the constant in bits 0-63.
    const setOperatorFee = ({ scalar, constant }: { scalar: bigint; constant: bigint }) =>
      setStorage(L1_BLOCK_ADDRESS, 8, word((scalar << 64n) | constant));

    await local.testClient.setCode({ address: L1_BLOCK_ADDRESS, bytecode: fixtureCode("L1Block") });
    await setGasPriceOracle(true);
    await writeL1Fees(merged({ ...DEFAULT_OP_STACK_FEES }, options));
    // OP mode takes the L1 fee in eth_call too, from the caller: an eth_call with no sender comes from address(0).
    await local.testClient.setBalance({ address: zeroAddress, value: 10n ** 24n });
    return {
      ...local,
      l1Fees,
      setL1Fees: async (changes) => writeL1Fees(merged(await l1Fees(), changes)),
      setOperatorFee,
      setGasPriceOracle,
      getL1Fee: (data) =>
        local.publicClient.readContract({
          address: GAS_PRICE_ORACLE_ADDRESS,
          abi: gasPriceOracleAbi,
          functionName: "getL1Fee",
          args: [data],
        }),
    };
  } catch (error) {
    await local.anvil.stop();
    throw error;
  }
}

/** The stand-in's figures (see contracts/test/NodeInterfaceStandIn.sol for the slot of each). */
export interface ArbitrumL1Gas {
  /** L1 gas per byte of the data asked about. */
  l1GasPerByte: bigint;
  /** L1 gas added to every answer. */
  l1GasConstant: bigint;
  /** The `baseFee` answered (the L2's). */
  l2BaseFee: bigint;
  /** The `l1BaseFeeEstimate` answered. */
  l1BaseFeeEstimate: bigint;
}

/**
 * Some 60,000 L1 gas for a one-operation handleOps of 1.4 KB, about the execution part of its preVerificationGas, so
 * that a figure without it shows. The fees are Arbitrum One's floor for L2 and a quiet L1; Alto reads them only as
 * ratios over time.
 */
export const DEFAULT_ARBITRUM_L1_GAS: Readonly<ArbitrumL1Gas> = {
  l1GasPerByte: 40n,
  l1GasConstant: 5_000n,
  l2BaseFee: parseGwei("0.01"),
  l1BaseFeeEstimate: parseGwei("1"),
};

export interface ArbitrumChainOptions extends Partial<ArbitrumL1Gas> {
  /** Default 42161 (Arbitrum One). */
  chainId?: number;
}

export interface ArbitrumChain extends LocalChain {
  /** The stand-in's figures now, read from the chain (so a snapshot's revert shows). */
  l1Gas(): Promise<ArbitrumL1Gas>;
  /** Changes the figures given; the next call answers by them. */
  setL1Gas(changes: Partial<ArbitrumL1Gas>): Promise<void>;
  /** The stand-in's answer through eth_call, as a bundler asks it. */
  gasEstimateL1Component(
    to: Address,
    data: Hex,
  ): Promise<{ gasEstimateForL1: bigint; baseFee: bigint; l1BaseFeeEstimate: bigint }>;
}

/** The stand-in's storage, in the order of its state variables. */
const ARBITRUM_FIGURES = ["l1GasPerByte", "l1GasConstant", "l2BaseFee", "l1BaseFeeEstimate"] as const;

export async function startArbitrumChain(options: ArbitrumChainOptions = {}): Promise<ArbitrumChain> {
  // Prague as the ordinary local chain (src/devChain/localChain.ts), so the same stacks deploy the same way.
  const local = await startLocalChain({ chainId: options.chainId ?? 42161, args: ["--hardfork", "prague"] });
  try {
    const l1Gas = async (): Promise<ArbitrumL1Gas> => {
      const read = (functionName: (typeof ARBITRUM_FIGURES)[number]) =>
        local.publicClient.readContract({
          address: NODE_INTERFACE_ADDRESS,
          abi: nodeInterfaceStandInAbi,
          functionName,
        });
      const [l1GasPerByte, l1GasConstant, l2BaseFee, l1BaseFeeEstimate] = await Promise.all(ARBITRUM_FIGURES.map(read));
      return { l1GasPerByte, l1GasConstant, l2BaseFee, l1BaseFeeEstimate } as ArbitrumL1Gas;
    };
    const writeL1Gas = async (figures: ArbitrumL1Gas) => {
      for (const [index, name] of ARBITRUM_FIGURES.entries()) {
        await local.testClient.setStorageAt({
          address: NODE_INTERFACE_ADDRESS,
          index: slot(index),
          value: word(figures[name]),
        });
      }
    };
    await local.testClient.setCode({
      address: NODE_INTERFACE_ADDRESS,
      bytecode: nodeInterfaceStandIn.deployedBytecode as Hex,
    });
    await writeL1Gas(merged({ ...DEFAULT_ARBITRUM_L1_GAS }, options));
    return {
      ...local,
      l1Gas,
      setL1Gas: async (changes) => writeL1Gas(merged(await l1Gas(), changes)),
      gasEstimateL1Component: async (to, data) => {
        // Payable: viem calls it through simulateContract (an eth_call), as Alto does.
        const { result } = await local.publicClient.simulateContract({
          address: NODE_INTERFACE_ADDRESS,
          abi: nodeInterfaceAbi,
          functionName: "gasEstimateL1Component",
          args: [to, false, data],
        });
        const [gasEstimateForL1, baseFee, l1BaseFeeEstimate] = result;
        return { gasEstimateForL1, baseFee, l1BaseFeeEstimate };
      },
    };
  } catch (error) {
    await local.anvil.stop();
    throw error;
  }
}

/** What deployPaymasterStacks put on the chain: the ordinary local chain's addresses (src/chain/localAddresses.ts). */
export interface PaymasterStacks {
  v06: { entryPoint: Address; simpleAccountFactory: Address; verifyingPaymaster: Address };
  later: Record<LaterEntryPointVersion, LocalEntryPointStack>;
}

/**
 * The EntryPoint stacks with our verifying and token paymasters, deployed, given `signer` and funded as the ordinary
 * local chain's start does (src/devChain/localChain.ts), by anvil's first account; not its test token, the v0.6 token
 * paymaster or the smart accounts' families, which these tests do not use.
 */
export async function deployPaymasterStacks(chain: LocalChain, signer: Address): Promise<PaymasterStacks> {
  const clients = chain.clients(anvilKeys.owner);
  const { stack, later } = await deployAllLocalStacks(clients);
  const [additions, funding] = await Promise.all([
    signerAdditions(clients, signer, [
      stack.verifyingPaymaster.address,
      ...LATER_ENTRY_POINT_VERSIONS.flatMap((version) => [
        later[version].verifyingPaymaster.address,
        later[version].tokenPaymaster.address,
        later[version].permitTokenPaymaster.address,
      ]),
    ]),
    tokenPaymasterV07Funding(
      clients,
      LATER_ENTRY_POINT_VERSIONS.flatMap((version) =>
        [later[version].tokenPaymaster, later[version].permitTokenPaymaster].map(({ address }) => ({
          paymaster: address,
          entryPoint: later[version].entryPoint.address,
        })),
      ),
    ),
  ]);
  await sendTogether(clients, [...additions, ...funding]);
  const addresses = (version: LaterEntryPointVersion): LocalEntryPointStack => {
    const {
      entryPoint,
      simpleAccountFactory,
      verifyingPaymaster,
      tokenPaymaster,
      permitTokenPaymaster,
      simple7702Account,
    } = later[version];
    return {
      entryPoint: entryPoint.address,
      simpleAccountFactory: simpleAccountFactory.address,
      verifyingPaymaster: verifyingPaymaster.address,
      tokenPaymaster: tokenPaymaster.address,
      permitTokenPaymaster: permitTokenPaymaster.address,
      ...(simple7702Account ? { simple7702Account: simple7702Account.address } : {}),
    };
  };
  return {
    v06: {
      entryPoint: stack.entryPoint.address,
      simpleAccountFactory: stack.simpleAccountFactory.address,
      verifyingPaymaster: stack.verifyingPaymaster.address,
    },
    later: { "0.7": addresses("0.7"), "0.8": addresses("0.8"), "0.9": addresses("0.9") },
  };
}
