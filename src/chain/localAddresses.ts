import type { Address } from "viem";
import { ENTRY_POINT_V07_ADDRESS, ENTRY_POINT_V08_ADDRESS } from "../bindings/entryPoints/entryPointV07";
import { ENTRY_POINT_V09_ADDRESS } from "../bindings/entryPoints/entryPointV09";
import type { LaterEntryPointVersion } from "../config";

// Where the project deploys its paymasters on the local development chain (31337). src/devChain/deployments.ts and
// tokenDeployment.ts compute them from the contracts' bytecode, which needs the development packages; the service only
// needs the addresses as defaults (sponsoringChains.ts), so they are written here, below both, and test/chain/localAddresses.test.ts checks that they
// are still what the bytecode gives (a rebuilt contract moves them: update both here and in docs/local-chain.md).

/** Our VerifyingPaymaster, CREATE2 from the committed bytecode, canonical EntryPoint, anvil's first account. */
export const LOCAL_VERIFYING_PAYMASTER_ADDRESS: Address = "0xE0b81000EedE642Feb23c4Ef8a085de5554467b8";

/** Our TokenPaymaster, the same way. */
export const LOCAL_TOKEN_PAYMASTER_ADDRESS: Address = "0x7f26f69730643a7Fc9C0255324568264AD13Bd09";

/** What the local chain runs for one EntryPoint version after v0.6. */
export interface LocalEntryPointStack {
  /** The canonical EntryPoint, deployed with the salt it has on public chains. */
  entryPoint: Address;
  /** The reference SimpleAccountFactory of the version (permissionless's default factory address for it). */
  simpleAccountFactory: Address;
  /** Our VerifyingPaymasterV07, built against this EntryPoint, anvil's first account as owner. */
  verifyingPaymaster: Address;
  /** Our TokenPaymasterV07 (ERC20 mode), built the same way; funded and staked by the local chain's start. */
  tokenPaymaster: Address;
  /** Our PermitTokenPaymasterV07 (ERC20 mode charged up front, with a permit), built, funded and staked the same way. */
  permitTokenPaymaster: Address;
  /** v0.8 and v0.9: the reference account an EOA delegates to with EIP-7702. */
  simple7702Account?: Address;
}

/** The EntryPoint v0.7 and v0.8 stacks of the local chain; the factories and Simple7702Account sit at their public addresses. */
export const LOCAL_ENTRY_POINT_STACKS: Readonly<Record<LaterEntryPointVersion, Readonly<LocalEntryPointStack>>> = {
  "0.7": {
    entryPoint: ENTRY_POINT_V07_ADDRESS,
    simpleAccountFactory: "0x91E60e0613810449d098b0b5Ec8b51A0FE8c8985",
    verifyingPaymaster: "0xfbF77a6fAe1684fFF523037e5978EbaE270a7CE4",
    tokenPaymaster: "0x91C5D6E772B38dc33278d03585757727dbbd0511",
    permitTokenPaymaster: "0x88d9885a5a6BA658B232B472f971F6CB8dd0abFb",
  },
  "0.8": {
    entryPoint: ENTRY_POINT_V08_ADDRESS,
    simpleAccountFactory: "0x13E9ed32155810FDbd067D4522C492D6f68E5944",
    verifyingPaymaster: "0x33c162FEEBdEE875c0926c719478eadcE2545f6b",
    tokenPaymaster: "0xCB53e96D68979aE44979fe01826D31aFA630077F",
    permitTokenPaymaster: "0xc9a3f36ab0846e9117b8fb88708b3f05e3dc9981",
    simple7702Account: "0xe6Cae83BdE06E4c305530e199D7217f42808555B",
  },
  // The factory is not canonical for v0.9 (none was published): Alto's tests put it here. The verifying paymaster is
  // VerifyingPaymasterV09 (a signer set, parallel signing); the token paymaster TokenPaymasterV07 built for v0.9; the
  // up-front one reads v0.9's signature suffix itself.
  "0.9": {
    entryPoint: ENTRY_POINT_V09_ADDRESS,
    simpleAccountFactory: "0xf4A7018FdBF22804526eC4b77DcE4f9b0D27a395",
    verifyingPaymaster: "0xFac60c78C93861CEff8A129f91DF2b0eAAE37259",
    tokenPaymaster: "0x1E6692D64A1D4d5b5adf42ff6966Aec0F4aA039b",
    permitTokenPaymaster: "0x4fA30B166bE48aEaf8Dc0a624078D9d51ff23456",
    simple7702Account: "0xa46cc63eBF4Bd77888AA327837d20b23A63a56B5",
  },
};
