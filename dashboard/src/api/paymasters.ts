import { useCallback, useEffect, useState } from "preact/hooks";
import { api, unwrap } from "./client";

export interface PaymasterView {
  name: string;
  chainId: number;
  apiKey: string;
  paymasterId: string;
  fundingWalletAddress: string | null;
  /** False while the whole paymaster is paused. */
  active: boolean;
  /** What ERC-7677's stub gives wallets as the sponsor; null until set. */
  sponsor: { name: string; icon?: string } | null;
  /** How many blocks an EntryPoint v0.9 signature stays valid; null: windows in seconds. */
  validityBlocks: number | null;
}

/** Our contracts for one EntryPoint version on a chain. */
export interface ServedEntryPointView {
  entryPoint: string;
  verifyingPaymaster?: string;
  tokenPaymaster?: string;
}

/** One failed check of one of our contracts on a chain: a sponsorship through that contract is refused. */
export interface FailedCheckView {
  /** The EntryPoint version, paymaster kind and contract (EntryPoint, paymaster or fee token), where the check has them. */
  entryPointVersion?: string;
  kind?: string;
  address?: string;
  check: string;
  detail: string;
  fix?: string;
}

export interface ChainView {
  chainId: number;
  name: string;
  /** The EntryPoint versions the chain serves ("0.6", "0.7", …), each with our paymasters; empty: not served yet. */
  entryPoints: Record<string, ServedEntryPointView>;
  checks: {
    status: "ok" | "failing" | "unknown" | "not checked";
    checkedAt?: string;
    failed: FailedCheckView[];
    readError?: string;
  };
}

/** Something read from the API: the value, the API's message when it failed, and a way to read it again. */
export interface Loaded<T> {
  value?: T;
  error?: string;
  reload: () => void;
}

/** Reads `load()` when the component appears and whenever `reload` is called or `key` changes. */
export function useLoad<T>(load: () => Promise<T>, key: unknown[] = []): Loaded<T> {
  const [state, setState] = useState<{ value?: T; error?: string }>({});
  const [generation, setGeneration] = useState(0);
  // `key` lists what the load depends on: `load` itself is a new closure on every render.
  useEffect(() => {
    let current = true;
    load().then(
      (value) => current && setState({ value }),
      (error: Error) => current && setState({ error: error.message }),
    );
    return () => {
      current = false;
    };
  }, [generation, ...key]);
  const reload = useCallback(() => setGeneration((g) => g + 1), []);
  return { ...state, reload };
}

export const listPaymasters = async (): Promise<PaymasterView[]> =>
  unwrap(api.GET("/api/v2/public/sdk/paymasterParameters"));

export const listChains = async (): Promise<ChainView[]> => unwrap(api.GET("/api/v2/public/sdk/chains"));

export const chainName = (chains: ChainView[] | undefined, chainId: number) =>
  chains?.find((chain) => chain.chainId === chainId)?.name ?? `chain ${chainId}`;
