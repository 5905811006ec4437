// What the chain says of a fee token's EIP-2612 permit, for the up-front token paymaster (docs/erc20-mode.md, 'Paying
// the first operation with a permit'): the token's EIP-712 domain (EIP-5267's eip712Domain(), else name() and
// version()), never assumed, since USDC's differs by network; the owner's nonce; the allowance already given; and
// whether a permit's signature verifies for an owner, as the token would check it (ECDSA for an EOA or an EIP-7702
// account's owner, ERC-1271 for a contract, an ERC-6492 wrapper for an account not deployed yet).
import { type Address, erc20Abi, type Hex, parseErc6492Signature, type TypedDataDomain } from "viem";
import { permitTypedData } from "../bindings/paymasters/permitTypedData";
import { chainClient } from "../chain/chainClient";
import type { SponsoringChain } from "../chain/sponsoringChains";

const permitReadAbi = [
  {
    type: "function",
    name: "eip712Domain",
    stateMutability: "view",
    inputs: [],
    outputs: [
      { name: "fields", type: "bytes1" },
      { name: "name", type: "string" },
      { name: "version", type: "string" },
      { name: "chainId", type: "uint256" },
      { name: "verifyingContract", type: "address" },
      { name: "salt", type: "bytes32" },
      { name: "extensions", type: "uint256[]" },
    ],
  },
  { type: "function", name: "name", stateMutability: "view", inputs: [], outputs: [{ type: "string" }] },
  { type: "function", name: "version", stateMutability: "view", inputs: [], outputs: [{ type: "string" }] },
  {
    type: "function",
    name: "nonces",
    stateMutability: "view",
    inputs: [{ name: "owner", type: "address" }],
    outputs: [{ type: "uint256" }],
  },
] as const;

/** The chain cannot be asked about the token's permit: no RPC, or the read failed. */
export class PermitReadError extends Error {
  override name = "PermitReadError";
}

function client(chain: Pick<SponsoringChain, "rpcUrl" | "chainId">) {
  const found = chainClient(chain);
  if (!found) throw new PermitReadError(`chain ${chain.chainId} has no RPC to read the fee token's permit from`);
  return found;
}

/** A token's domain does not change: read once per chain and token. */
const domains = new Map<string, Promise<TypedDataDomain>>();

/** The token's EIP-712 domain as the chain gives it: EIP-5267 first, else name() and version(). */
export function permitDomain(
  chain: Pick<SponsoringChain, "rpcUrl" | "chainId">,
  token: Address,
): Promise<TypedDataDomain> {
  const key = `${chain.chainId}:${token.toLowerCase()}`;
  let domain = domains.get(key);
  if (!domain) {
    domain = readDomain(chain, token);
    // A failed read is not kept: the next request asks again.
    domain.catch(() => domains.delete(key));
    domains.set(key, domain);
  }
  return domain;
}

async function readDomain(
  chain: Pick<SponsoringChain, "rpcUrl" | "chainId">,
  token: Address,
): Promise<TypedDataDomain> {
  const publicClient = client(chain);
  try {
    const [fields, name, version, chainId, verifyingContract, salt] = await publicClient.readContract({
      address: token,
      abi: permitReadAbi,
      functionName: "eip712Domain",
    });
    // EIP-5267: bit i of `fields` says whether the domain has its i-th member (name, version, chainId, contract, salt).
    const has = (bit: number) => (Number.parseInt(fields.slice(2), 16) & (1 << bit)) !== 0;
    return {
      ...(has(0) ? { name } : {}),
      ...(has(1) ? { version } : {}),
      ...(has(2) ? { chainId: Number(chainId) } : {}),
      ...(has(3) ? { verifyingContract } : {}),
      ...(has(4) ? { salt } : {}),
    };
  } catch {
    // No EIP-5267 (USDC before v2.2): the permit's domain is name, version, the chain and the token, as EIP-2612's.
  }
  try {
    const [name, version] = await Promise.all([
      publicClient.readContract({ address: token, abi: permitReadAbi, functionName: "name" }),
      publicClient.readContract({ address: token, abi: permitReadAbi, functionName: "version" }),
    ]);
    return { name, version, chainId: chain.chainId, verifyingContract: token };
  } catch (error) {
    throw new PermitReadError(`fee token ${token}'s EIP-712 domain could not be read: ${String(error)}`);
  }
}

/** The owner's permit nonce now: the one its next permit must be signed at. */
export async function permitNonce(
  chain: Pick<SponsoringChain, "rpcUrl" | "chainId">,
  token: Address,
  owner: Address,
): Promise<bigint> {
  try {
    return await client(chain).readContract({
      address: token,
      abi: permitReadAbi,
      functionName: "nonces",
      args: [owner],
    });
  } catch (error) {
    if (error instanceof PermitReadError) throw error;
    throw new PermitReadError(`fee token ${token}'s permit nonce of ${owner} could not be read: ${String(error)}`);
  }
}

/** The allowance `owner` gives `spender` now. */
export async function allowanceOf(
  chain: Pick<SponsoringChain, "rpcUrl" | "chainId">,
  token: Address,
  owner: Address,
  spender: Address,
): Promise<bigint> {
  try {
    return await client(chain).readContract({
      address: token,
      abi: erc20Abi,
      functionName: "allowance",
      args: [owner, spender],
    });
  } catch (error) {
    if (error instanceof PermitReadError) throw error;
    throw new PermitReadError(`fee token ${token}'s allowance of ${owner} could not be read: ${String(error)}`);
  }
}

/**
 * The signature the paymaster hands the token: an ERC-6492 wrapper (an account that signs before it is deployed)
 * taken off, since the operation deploys the account before the paymaster's validation runs the permit.
 */
export function tokenSignature(signature: Hex): Hex {
  return parseErc6492Signature(signature).signature;
}

export interface PermitToCheck {
  token: Address;
  owner: Address;
  spender: Address;
  value: bigint;
  nonce: bigint;
  /** As the wallet sent it: an ERC-6492 wrapper is kept here, for the check to deploy the account in simulation. */
  signature: Hex;
}

/** Whether the permit's signature verifies for its owner, as the token would check it once the account exists. */
export async function permitVerifies(
  chain: Pick<SponsoringChain, "rpcUrl" | "chainId">,
  permit: PermitToCheck,
): Promise<boolean> {
  const domain = await permitDomain(chain, permit.token);
  const typed = permitTypedData(domain, {
    owner: permit.owner,
    spender: permit.spender,
    value: permit.value,
    nonce: permit.nonce,
  });
  try {
    return await client(chain).verifyTypedData({ ...typed, address: permit.owner, signature: permit.signature });
  } catch {
    // A signature the account's check reverts on is one that does not verify.
    return false;
  }
}
