import Type, { type Static } from "typebox";
import { RpcAddress, RpcBytes, RpcUint } from "./fields";
import { withMessages } from "./messages";

/**
 * EntryPoint v0.9 parallel signing in the context of pm_getPaymasterData, after Candide's design: `signingPhase`
 * "commit" (decide, sign, keep the signature; answer the paymaster fields and a placeholder paymasterSignature) then
 * "finalize" (the same operation, now signed by the account: answer the real paymasterSignature). Absent: one step,
 * the signature inside paymasterData (sequential signing). Other context members are read by PaymasterContext.
 */
export const SigningPhaseContext = Type.Object(
  {
    signingPhase: Type.Optional(
      withMessages(
        Type.Union([Type.Literal("commit"), Type.Literal("finalize"), Type.Null()], {
          description:
            'EntryPoint v0.9 parallel signing: "commit", then "finalize" with the operation the account signed',
        }),
        { problem: 'must be "commit" or "finalize"', showsValue: true },
      ),
    ),
  },
  { title: "SigningPhaseContext" },
);
export type SigningPhaseContext = Static<typeof SigningPhaseContext>;

const UINT = "must be a non-negative integer as 0x hex, a decimal string or a number";

/** At "finalize", the operation carries the paymaster fields "commit" answered, as the account signed over them. */
export const CommittedPaymasterFields = Type.Object(
  {
    paymaster: withMessages(RpcAddress, {
      problem: "must be an address: 0x followed by 40 hex digits",
      missing: "is required at finalize: the paymaster commit answered",
    }),
    paymasterVerificationGasLimit: withMessages(RpcUint, { problem: UINT, missing: "is required at finalize" }),
    paymasterPostOpGasLimit: withMessages(RpcUint, { problem: UINT, missing: "is required at finalize" }),
    paymasterData: withMessages(RpcBytes, {
      problem: "must be 0x-prefixed hex of whole bytes",
      missing: "is required at finalize: the paymasterData commit answered",
    }),
  },
  { title: "CommittedPaymasterFields" },
);
export type CommittedPaymasterFields = Static<typeof CommittedPaymasterFields>;
