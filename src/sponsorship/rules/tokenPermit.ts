// The up-front token paymaster's grant check: validation takes the maximum charge from the sender, so the paymaster
// must be allowed it, by the allowance the sender already gave or by the EIP-2612 permit the request carries. A permit
// that cannot work is refused here, before anything is signed, naming the field at fault (-32602): one whose signature
// does not verify for owner = sender, spender = our paymaster at the token's current nonce (another owner or spender,
// or a nonce already used), a value below the maximum charge, or a second permit of the sender for the token while
// the first one's signature is still outstanding (the token has one nonce per owner: the first would then fail).
import { type Address, formatUnits, type Hex } from "viem";
import type { TokenConfig } from "../../config";
import { FeeTokenRefusedError, type TokenChain } from "../../tokens/erc20Terms";
import { allowanceOf, permitNonce, permitVerifies } from "../../tokens/permit";
import type { Rule } from "../rule";

export interface PermitGrant {
  chain: TokenChain;
  token: TokenConfig;
  /** The up-front token paymaster: the permit's spender. */
  paymaster: Address;
  /** The permit as the wallet sent it (its signature unstripped), and where the request names it. */
  permit?: { value: bigint; signature: Hex; label: string };
  /**
   * Whether another sponsorship of the sender for this token carrying a permit is signed, not yet settled and not
   * expired (the ledger knows): its permit would use the nonce this one is signed at.
   */
  outstandingPermit: (sender: Address) => Promise<boolean>;
}

/** The rule for one request's grant, given the sender and its maximum charge in the token's units. */
export function tokenPermitRule(grant: PermitGrant, sender: Address, maximum: bigint): Rule {
  return {
    name: "ERC20 permit",
    evaluate: async () => {
      const { chain, token, paymaster, permit } = grant;
      const tokenAddress = token.address as Address;
      const amount = (value: bigint) => `${formatUnits(value, token.decimals)} ${token.symbol}`;
      const allowance = await allowanceOf(chain, tokenAddress, sender, paymaster);
      // The contract runs a permit only when the allowance is short: one already covered (a front-run permit, an
      // approve) needs nothing more, whatever the permit carried.
      if (allowance >= maximum) return { rule: "ERC20 permit", passed: true, allowance: allowance.toString() };
      if (!permit) {
        throw new FeeTokenRefusedError(
          `Sender ${sender} allows the up-front token paymaster ${paymaster} ${amount(allowance)}, less than the ` +
            `${amount(maximum)} this operation can be charged at most, and the context carries no permit`,
        );
      }
      if (permit.value < maximum) {
        throw new FeeTokenRefusedError(
          `${permit.label}.value: ${permit.value} (${amount(permit.value)}) is below the ${maximum} ` +
            `(${amount(maximum)}) this operation can be charged at most; sign a permit for at least that`,
        );
      }
      const nonce = await permitNonce(chain, tokenAddress, sender);
      const verifies = await permitVerifies(chain, {
        token: tokenAddress,
        owner: sender,
        spender: paymaster,
        value: permit.value,
        nonce,
        signature: permit.signature,
      });
      if (!verifies) {
        throw new FeeTokenRefusedError(
          `${permit.label}.signature: does not verify as ${token.symbol}'s Permit of owner ${sender} (the sender) ` +
            `for spender ${paymaster} (the up-front token paymaster), value ${permit.value}, nonce ${nonce} (the ` +
            "token's now) and the maximum deadline: another owner or spender, or a nonce already used",
        );
      }
      if (await grant.outstandingPermit(sender)) {
        throw new FeeTokenRefusedError(
          `${permit.label}: sender ${sender} has an operation with a ${token.symbol} permit signed and not yet ` +
            "settled; its permit uses the same nonce, so a second one is signed only once the first is mined or expired",
        );
      }
      // The ledger finds an outstanding permit by this outcome (src/storage/outstandingPermits.ts).
      return {
        rule: "ERC20 permit",
        passed: true,
        feeToken: token.address,
        permit: true,
        permitValue: permit.value.toString(),
        nonce: nonce.toString(),
      };
    },
  };
}
