// A SimpleAccount for a new owner that does not exist yet: its address under a factory, read from the factory itself,
// and the factory call that creates it. Tests use it as the account an operation deploys, or as a whitelisted call
// whose effect can be seen afterwards (code at the address), so the two steps are written once here.
import { type Address, encodeFunctionData, type Hex, type PublicClient } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { simpleAccountFactoryAbi } from "../../src/devChain/simpleAccount";

export interface FreshAccount {
  owner: Address;
  /** The account's counterfactual address: where createAccount will put it. */
  sender: Address;
  /** The createAccount call, for the factory's data or as a call of another account. */
  factoryData: Hex;
}

export async function freshAccount(client: PublicClient, factory: Address): Promise<FreshAccount> {
  const owner = privateKeyToAccount(generatePrivateKey()).address;
  const sender = await client.readContract({
    address: factory,
    abi: simpleAccountFactoryAbi,
    functionName: "getAddress",
    args: [owner, 0n],
  });
  const factoryData = encodeFunctionData({
    abi: simpleAccountFactoryAbi,
    functionName: "createAccount",
    args: [owner, 0n],
  });
  return { owner, sender, factoryData };
}
