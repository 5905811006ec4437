// `contracts deposit`: adds to the token paymasters' own EntryPoint deposits (both kinds), which pay the gas of every
// ERC20-mode operation. Not the verifying paymaster's: its deposit is the dApps' balances, which each funds with depositFor.
// Adds --amount every time it runs (a deposit is not a level to reach): `status` shows the deposit.
import { encodeFunctionData, formatEther } from "viem";
import { tokenPaymasterV07Abi } from "../../../contracts/artifacts/TokenPaymasterV07.abi";
import { CommandError } from "./options";
import type { SentTransaction } from "./session";
import { label, type Target } from "./targets";

export async function deposit(
  chosen: readonly Target[],
  amount: bigint,
  sendOne: (
    what: string,
    to: Target["address"],
    data: `0x${string}`,
    value?: bigint,
  ) => Promise<SentTransaction | undefined>,
): Promise<void> {
  if (chosen.some((target) => target.kind === "verifying")) {
    throw new CommandError(
      "deposit funds token paymasters only (--kinds token,permitToken): a verifying paymaster's deposit is the dApps' balances, which each dApp funds with depositFor",
    );
  }
  for (const target of chosen) {
    await sendOne(
      `adding ${formatEther(amount)} to the EntryPoint deposit of ${label(target)}`,
      target.address,
      // deposit() reads alike in TokenPaymaster (v0.6), TokenPaymasterV07 and PermitTokenPaymasterV07.
      encodeFunctionData({ abi: tokenPaymasterV07Abi, functionName: "deposit" }),
      amount,
    );
  }
}
