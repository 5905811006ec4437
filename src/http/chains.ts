import type { FastifyInstance } from "fastify";
import type { Address } from "viem";
import type { ContractWatch } from "../chain/contractWatch";
import type { SponsoringChain } from "../chain/sponsoringChains";
import { listChainsSchema } from "../schemas/management/chains";
import { accountGuard } from "./auth";
import { contractChecksView } from "./contractChecksView";
import { success } from "./envelope";
import { l1DataFeeView } from "./l1DataFeeView";
import { type Management, typed } from "./management";

/**
 * An extension: the configured chains, by id, which is exactly what paymaster creation accepts, with the EntryPoint
 * versions each serves and whether the service's checks of its contracts hold.
 */
export function chainRoutes(
  app: FastifyInstance,
  { credentials }: Management,
  chains: ReadonlyMap<number, SponsoringChain>,
  contractWatch: ContractWatch | undefined,
): void {
  const account = accountGuard(credentials);
  typed(app).get("/chains", { schema: listChainsSchema, preValidation: account.preValidation }, async () => {
    const list = [...chains.values()]
      .map((chain) => ({
        chainId: chain.chainId,
        name: chain.name,
        entryPoints: servedEntryPoints(chain),
        feeTokens: (chain.tokens ?? []).map((token) => ({
          address: token.address,
          symbol: token.symbol,
          decimals: token.decimals,
          permit: token.permit === true,
        })),
        l1DataFee: l1DataFeeView(chain),
        checks: contractChecksView(contractWatch, chain.chainId),
      }))
      .sort((a, b) => a.chainId - b.chainId);
    return success("Supported chains fetched", list);
  });
}

interface ServedContracts {
  entryPoint: Address;
  verifyingPaymaster?: Address;
  tokenPaymaster?: Address;
  permitTokenPaymaster?: Address;
}

/**
 * The versions with at least one of our paymasters, by version: a version whose EntryPoint alone is listed (the known
 * networks of the default chains file) signs nothing, so it is not served.
 */
function servedEntryPoints(chain: SponsoringChain): Record<string, ServedContracts> {
  const served: Record<string, ServedContracts> = {};
  for (const [version, contracts] of [["0.6", chain] as const, ...chain.entryPoints]) {
    const { entryPoint, verifyingPaymaster, tokenPaymaster } = contracts;
    // v0.6 has no up-front token paymaster.
    const permitTokenPaymaster = "permitTokenPaymaster" in contracts ? contracts.permitTokenPaymaster : undefined;
    if (!verifyingPaymaster && !tokenPaymaster) continue;
    served[version] = {
      entryPoint,
      ...(verifyingPaymaster ? { verifyingPaymaster } : {}),
      ...(tokenPaymaster ? { tokenPaymaster } : {}),
      ...(permitTokenPaymaster ? { permitTokenPaymaster } : {}),
    };
  }
  return served;
}
