// Coinbase Smart Wallet 1 (what viem's toCoinbaseSmartAccount builds by default, on EntryPoint v0.6): its
// implementation and factory, deployed through Safe's singleton factory with the salts and creation code of Coinbase's
// own deployment transactions (the broadcast files of the coinbase/smart-wallet repository).
import coinbaseData from "../../contracts/accounts/coinbaseSmartWallet.json" with { type: "json" };
import { type AccountFamily, loadAccountDeploymentData } from "./accountDeploymentData";

export const coinbaseSmartWalletFamily: AccountFamily = {
  name: "Coinbase Smart Wallet 1",
  entryPointVersion: "0.6",
  data: loadAccountDeploymentData(coinbaseData, "contracts/accounts/coinbaseSmartWallet.json"),
};
