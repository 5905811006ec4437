import { createAccount } from "../../src/storage/accounts";
import { insertPaymaster, type Paymaster } from "../../src/storage/paymasters";

let created = 0;

/**
 * A new account with one paymaster on the local chain, written straight to storage: for tests of the storage and of
 * what reads it, which need a paymaster row and nothing the management API adds. Names are unique per process.
 */
export async function storedPaymaster(db: Parameters<typeof createAccount>[0], label = "stored"): Promise<Paymaster> {
  const n = ++created;
  // No service reads these rows' times: the wall clock dates the account's token.
  const account = await createAccount(db, `${label}-${n}`, Date.now());
  return insertPaymaster(db, {
    accountId: account.id,
    name: `p-${n}`,
    chainId: 31337,
    type: "HYBRID",
    version: "1.0.0",
  });
}
