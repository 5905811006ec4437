// A fresh EOA as permissionless's Simple7702Account of EntryPoint v0.8 on the local stacks, with its signed delegation
// to the stack's Simple7702Account (nonce 0: it has never sent anything): the account whose first operation carries the
// authorization. The contract, Alto and ERC-7677 tests each made one the same way.
import assert from "node:assert/strict";
import { to7702SimpleSmartAccount } from "permissionless/accounts";
import type { Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { LocalStacks } from "../contracts/v07/localStacks";

export async function eip7702AccountV08(env: Pick<LocalStacks, "publicClient" | "chain" | "viemChain">) {
  const owner = privateKeyToAccount(generatePrivateKey());
  const stack = env.chain.info.entryPoints["0.8"];
  const account = await to7702SimpleSmartAccount({
    client: env.publicClient,
    owner,
    entryPoint: { address: stack.entryPoint, version: "0.8" },
  });
  assert.equal(account.address, owner.address, "the account is the EOA itself");
  const implementation: Address | undefined = stack.simple7702Account;
  assert.ok(implementation, "the local stack of v0.8 has a Simple7702Account");
  const authorization = await owner.signAuthorization({ address: implementation, chainId: env.viemChain.id, nonce: 0 });
  return { owner, account, implementation, authorization };
}
