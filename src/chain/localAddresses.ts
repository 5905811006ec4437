import type { Address } from "viem";

// Where the project deploys its paymasters on the local development chain (31337). deployments.ts and
// tokenDeployment.ts compute them from the contracts' bytecode, which needs the development packages; the service only
// needs the two addresses as defaults, so they are written here and test/chain/localAddresses.test.ts checks that they
// are still what the bytecode gives (a rebuilt contract moves them: update both here and in the docs).

/** Our VerifyingPaymaster, CREATE2 from the committed bytecode, canonical EntryPoint, anvil's first account. */
export const LOCAL_VERIFYING_PAYMASTER_ADDRESS: Address = "0x801EFa4f95796C9CDB1f6638470040B256887260";

/** Our TokenPaymaster, the same way. */
export const LOCAL_TOKEN_PAYMASTER_ADDRESS: Address = "0x594835143e0857090042250e7fd30829bE1e3630";
