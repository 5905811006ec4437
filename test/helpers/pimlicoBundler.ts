// viem's bundler client on an Alto stack with Pimlico's pm_sponsorUserOperation as its paymaster step, the flow of
// wallets that let the paymaster have the bundler estimate the gas: the stub from pm_getPaymasterStubData, then one
// call that answers the gas limits and the paymaster fields together. Each answer is kept in `answers`, for the test
// to check what the service signed. The ERC20 and ERC-7677 e2e files both drive this flow.
import { createPimlicoClient } from "permissionless/clients/pimlico";
import { type Hex, http } from "viem";
import { createBundlerClient, type EntryPointVersion, type SmartAccount } from "viem/account-abstraction";
import type { AltoStack } from "./altoStack";

export function pimlicoBundlerFor(
  stack: Pick<AltoStack, "env" | "alto">,
  endpoint: string,
  account: SmartAccount,
  entryPoint: { address: Hex; version: EntryPointVersion },
  paymasterContext?: unknown,
) {
  const pimlico = createPimlicoClient({ transport: http(endpoint), entryPoint });
  const answers: Record<string, unknown>[] = [];
  const bundler = createBundlerClient({
    account,
    client: stack.env.publicClient,
    transport: http(stack.alto.url),
    pollingInterval: 50,
    paymasterContext,
    paymaster: {
      getPaymasterStubData: (parameters) => pimlico.getPaymasterStubData(parameters),
      getPaymasterData: async (parameters) => {
        const { chainId: _, entryPointAddress: __, context, ...op } = parameters;
        const sponsored = await pimlico.sponsorUserOperation({
          userOperation: { ...op, signature: (op as { signature?: Hex }).signature ?? "0x" } as never,
          paymasterContext: context,
        });
        answers.push(sponsored as Record<string, unknown>);
        return sponsored as never;
      },
    },
  });
  return { bundler, answers };
}
