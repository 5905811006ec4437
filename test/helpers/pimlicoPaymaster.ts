// viem's bundler client with Pimlico's pm_sponsorUserOperation as its paymaster step, the flow of wallets that let the
// paymaster have the bundler estimate the gas: the stub from pm_getPaymasterStubData, then one call that answers the
// gas limits and the paymaster fields together. Each answer is kept, for the test to check what the service signed.

import type { createPimlicoClient } from "permissionless/clients/pimlico";
import type { Hex } from "viem";
import type { BundlerClientConfig } from "viem/account-abstraction";

type PimlicoClient = ReturnType<typeof createPimlicoClient>;

/** The `paymaster` of a bundler client, sponsoring through `pimlico`; `answered` is handed each answer. */
export function pimlicoPaymaster(
  pimlico: PimlicoClient,
  answered: (answer: Record<string, unknown>) => void,
): NonNullable<BundlerClientConfig["paymaster"]> {
  return {
    getPaymasterStubData: (parameters) => pimlico.getPaymasterStubData(parameters),
    getPaymasterData: async (parameters) => {
      const { chainId: _, entryPointAddress: __, context, ...op } = parameters;
      const sponsored = await pimlico.sponsorUserOperation({
        userOperation: { ...op, signature: (op as { signature?: Hex }).signature ?? "0x" } as never,
        paymasterContext: context,
      });
      answered(sponsored as Record<string, unknown>);
      return sponsored as never;
    },
  };
}
