// `npm run demo`, the permit part: a new EOA delegating to Simple7702Account on EntryPoint v0.8 pays its first
// operation in TUSDC, the local USDC-like token, through the up-front token paymaster, with no approve anywhere in its
// calls. The stub offers the EIP-2612 Permit to sign (permitTypedData), the owner signs it, and the permit goes back
// in the context of pm_getPaymasterData; validation takes the maximum charge and postOp refunds the rest. The wallet's
// side of docs/erc20-mode.md, 'Paying the first operation with a permit', with viem and our own helpers only.
import {
  type Address,
  encodeFunctionData,
  erc20Abi,
  formatUnits,
  type Hex,
  isAddressEqual,
  maxUint256,
  numberToHex,
  parseEventLogs,
  type TypedDataDomain,
} from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { entryPointV07Abi } from "../bindings/entryPoints/entryPointV07";
import {
  eip7702AuthOf,
  getUserOpHashV07,
  packUserOperation,
  toRpcUserOperationV07,
  type UserOperationV07,
} from "../bindings/entryPoints/userOperationV07";
import { permitTokenPaymasterV07Artifact } from "../bindings/paymasters/tokenArtifacts";
import { simpleAccountAbi } from "../devChain/simpleAccount";
import { LOCAL_PERMIT_TOKEN, LOCAL_PERMIT_TOKEN_ADDRESS, mintTestTokens } from "../devChain/tokenDeployment";
import { demoRpc } from "./demoRpc";
import type { LaterEntryPointDemoContext } from "./demoV07";

/** What the new EOA is given: 100 TUSDC, and no ether. */
const MINTED = 100_000_000n;
/** What its call sends to a stranger: 1 TUSDC. */
const SENT = 1_000_000n;
/**
 * The account's gas, chosen by the demo (it has no bundler): a delegated account's validation, a token transfer, and a
 * preVerificationGas near what bundlers ask for one operation. The up-front paymaster's own limits are the service's.
 */
const GAS = { verificationGasLimit: 100_000n, callGasLimit: 100_000n, preVerificationGas: 50_000n };

interface OfferedPermit {
  domain: TypedDataDomain;
  types: { Permit: { name: string; type: string }[] };
  message: { owner: Address; spender: Address; value: string; nonce: string; deadline: string };
}

interface PaymasterFields {
  paymaster: Address;
  paymasterData: Hex;
  paymasterVerificationGasLimit: Hex;
  paymasterPostOpGasLimit: Hex;
}

const tusdc = (amount: bigint) => `${formatUnits(amount, LOCAL_PERMIT_TOKEN.decimals)} TUSDC`;

/** The permit-paid operation, each step printed; returns the next step's number. */
export async function runPermitDemo(context: LaterEntryPointDemoContext, first: number): Promise<number> {
  const { publicClient, bundler, step, detail } = context;
  let n = first;
  const { entryPoint, simple7702Account, permitTokenPaymaster } = context.stacks["0.8"];
  if (!simple7702Account) throw new Error("local-chain.json names no Simple7702Account for EntryPoint v0.8");
  const eoa = privateKeyToAccount(generatePrivateKey());
  await mintTestTokens({ publicClient, walletClient: bundler }, eoa.address, MINTED, LOCAL_PERMIT_TOKEN_ADDRESS);
  const balance = () =>
    publicClient.readContract({
      address: LOCAL_PERMIT_TOKEN_ADDRESS,
      abi: erc20Abi,
      functionName: "balanceOf",
      args: [eoa.address],
    });
  step(
    n++,
    `EntryPoint v0.8, ERC20 mode charged up front: EOA ${eoa.address} (no ether, no code) holds ` +
      `${tusdc(await balance())} and sends ${tusdc(SENT)} with no approve`,
  );

  const authorization = await eoa.signAuthorization({ address: simple7702Account, chainId: context.chainId, nonce: 0 });
  const stranger = privateKeyToAccount(generatePrivateKey()).address;
  const transfer = encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [stranger, SENT] });
  const fees = await publicClient.estimateFeesPerGas();
  const op: UserOperationV07 = {
    sender: eoa.address,
    nonce: 0n,
    factory: "0x7702",
    factoryData: "0x",
    callData: encodeFunctionData({
      abi: simpleAccountAbi,
      functionName: "execute",
      args: [LOCAL_PERMIT_TOKEN_ADDRESS, 0n, transfer],
    }),
    ...GAS,
    maxFeePerGas: fees.maxFeePerGas,
    maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
    signature: "0x",
    eip7702Auth: eip7702AuthOf(authorization),
  };
  const params = (o: UserOperationV07, context_: object) => [
    toRpcUserOperationV07(o),
    entryPoint,
    numberToHex(context.chainId),
    context_,
  ];

  const stub = await demoRpc<{ permitTypedData?: OfferedPermit }>(
    context,
    "pm_getPaymasterStubData",
    params(op, { token: LOCAL_PERMIT_TOKEN_ADDRESS }),
  );
  const offer = stub.permitTypedData;
  if (!offer) throw new Error("pm_getPaymasterStubData offered no Permit for TUSDC");
  detail(
    `pm_getPaymasterStubData { token }: permitTypedData for ${offer.domain.name} v${offer.domain.version}, spender ` +
      `${offer.message.spender} (the up-front token paymaster), value ${tusdc(BigInt(offer.message.value))}, nonce ` +
      `${offer.message.nonce}, deadline the maximum`,
  );
  const value = BigInt(offer.message.value);
  const signature = await eoa.signTypedData({
    domain: offer.domain,
    types: offer.types,
    primaryType: "Permit",
    message: { ...offer.message, value, nonce: BigInt(offer.message.nonce), deadline: maxUint256 },
  });
  const permitContext = {
    token: LOCAL_PERMIT_TOKEN_ADDRESS,
    permit: { value: numberToHex(value), deadline: numberToHex(maxUint256), signature },
  };
  const data = await demoRpc<PaymasterFields>(context, "pm_getPaymasterData", params(op, permitContext));
  if (!isAddressEqual(data.paymaster, permitTokenPaymaster)) {
    throw new Error(`pm_getPaymasterData named paymaster ${data.paymaster}, not ${permitTokenPaymaster}`);
  }
  const unsigned: UserOperationV07 = {
    ...op,
    paymaster: data.paymaster,
    paymasterData: data.paymasterData,
    paymasterVerificationGasLimit: BigInt(data.paymasterVerificationGasLimit),
    paymasterPostOpGasLimit: BigInt(data.paymasterPostOpGasLimit),
  };
  detail(
    `the owner signed the Permit; pm_getPaymasterData { token, permit }: paymasterData ` +
      `${(data.paymasterData.length - 2) / 2} bytes with the permit in it, paymasterVerificationGasLimit ` +
      `${unsigned.paymasterVerificationGasLimit}, paymasterPostOpGasLimit ${unsigned.paymasterPostOpGasLimit}`,
  );

  const userOpHash = getUserOpHashV07(unsigned, entryPoint, context.chainId, "0.8");
  const signed = { ...unsigned, signature: await eoa.sign({ hash: userOpHash }) };
  const hash = await bundler.writeContract({
    address: entryPoint,
    abi: entryPointV07Abi,
    functionName: "handleOps",
    args: [[packUserOperation(signed)], bundler.account.address],
    authorizationList: [authorization],
  });
  const receipt = await publicClient.waitForTransactionReceipt({ hash });
  step(n++, `Signed by the owner (userOpHash ${userOpHash}), handleOps sent by ${bundler.account.address}`);
  if (receipt.status !== "success") throw new Error(`handleOps on EntryPoint v0.8 reverted: ${hash}`);
  const event = parseEventLogs({ abi: entryPointV07Abi, eventName: "UserOperationEvent", logs: receipt.logs }).find(
    (e) => e.args.userOpHash === userOpHash,
  );
  const [charged] = parseEventLogs({
    abi: permitTokenPaymasterV07Artifact.abi,
    eventName: "TokenCharged",
    logs: receipt.logs,
  }).filter((e) => e.args.userOpHash === userOpHash);
  if (!event?.args.success || !charged) {
    throw new Error(`the permit-paid operation ${userOpHash} was not mined with a charge in ${hash}`);
  }
  detail(
    `UserOperationEvent success: true, paymaster ${event.args.paymaster}; TokenCharged: charge ` +
      `${tusdc(charged.args.charge)}, refund ${tusdc(charged.args.refund)} of the ` +
      `${tusdc(charged.args.charge + charged.args.refund)} taken before the call`,
  );
  detail(`the EOA now holds ${tusdc(await balance())}: ${tusdc(MINTED)} less the transfer and the charge`);
  return n;
}
