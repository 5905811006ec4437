/** A browser wallet (EIP-1193), as extensions inject it. Only the three calls the dashboard makes are used. */
interface Eip1193Provider {
  request(args: { method: string; params?: unknown[] }): Promise<unknown>;
}

declare global {
  interface Window {
    ethereum?: Eip1193Provider;
  }
}

export const hasBrowserWallet = (): boolean => typeof window.ethereum?.request === "function";

function provider(): Eip1193Provider {
  if (!window.ethereum) throw new Error("No browser wallet found: install one, or paste a signature instead");
  return window.ethereum;
}

/** The wallet's selected account, asking the user to connect when needed. */
export async function connectWallet(): Promise<string> {
  const accounts = (await provider().request({ method: "eth_requestAccounts" })) as string[];
  const [account] = accounts;
  if (!account) throw new Error("The wallet gave no account");
  return account;
}

/** Text as the 0x-hex of its UTF-8 bytes, which is how personal_sign takes a message. */
const utf8Hex = (text: string) =>
  `0x${[...new TextEncoder().encode(text)].map((byte) => byte.toString(16).padStart(2, "0")).join("")}`;

/** EIP-191 signature of `message` by `account` (personal_sign: message first, then the address). */
export async function personalSign(message: string, account: string): Promise<string> {
  return (await provider().request({ method: "personal_sign", params: [utf8Hex(message), account] })) as string;
}

/** The chain the wallet is on, as a number. */
export async function walletChainId(): Promise<number> {
  return Number.parseInt((await provider().request({ method: "eth_chainId" })) as string, 16);
}

/** depositFor(address) of the verifying paymaster: its selector, then the address as one 32-byte word. */
const DEPOSIT_FOR_SELECTOR = "0xaa67c919";

/** Sends `depositFor(fundingWallet)` with `wei` to the verifying paymaster from the wallet; the transaction hash. */
export async function depositFor(options: {
  from: string;
  verifyingPaymaster: string;
  fundingWallet: string;
  wei: bigint;
}): Promise<string> {
  const data = DEPOSIT_FOR_SELECTOR + options.fundingWallet.toLowerCase().replace(/^0x/, "").padStart(64, "0");
  return (await provider().request({
    method: "eth_sendTransaction",
    params: [{ from: options.from, to: options.verifyingPaymaster, value: `0x${options.wei.toString(16)}`, data }],
  })) as string;
}
