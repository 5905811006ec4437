import { api, dapp, unwrap } from "../api/client";
import type { PaymasterView } from "../api/paymasters";
import { Copyable, FormError, useSubmit } from "../ui/forms";
import { SponsorInfo } from "./sponsorInfo";
import { ValidityBlocks } from "./validityBlocks";

/** The paymaster's sponsorship endpoint: the path the Biconomy SDK and the other clients call, with the apiKey in it. */
const rpcUrlOf = (paymaster: PaymasterView) => `${location.origin}/api/v1/${paymaster.chainId}/${paymaster.apiKey}`;

const snippets = (rpcUrl: string) => [
  {
    label: "viem createPaymasterClient (ERC-7677)",
    code: `import { http } from "viem";
import { createBundlerClient, createPaymasterClient } from "viem/account-abstraction";

const paymaster = createPaymasterClient({ transport: http("${rpcUrl}") });
const bundlerClient = createBundlerClient({
  account, // your smart account
  client, // a public client of the chain
  transport: http(BUNDLER_URL),
  paymaster,
});`,
  },
  {
    label: "permissionless",
    code: `import { http } from "viem";
import { entryPoint07Address } from "viem/account-abstraction";
import { createSmartAccountClient } from "permissionless";
import { createPimlicoClient } from "permissionless/clients/pimlico";

const paymaster = createPimlicoClient({
  transport: http("${rpcUrl}"),
  entryPoint: { address: entryPoint07Address, version: "0.7" },
});
const smartAccountClient = createSmartAccountClient({
  account, // e.g. toSimpleSmartAccount(...)
  chain,
  bundlerTransport: http(BUNDLER_URL),
  paymaster,
});`,
  },
  {
    label: "Biconomy SDK",
    code: `import { createSmartAccountClient, PaymasterMode } from "@biconomy/account";

const smartAccount = await createSmartAccountClient({
  signer, // your EOA signer
  bundlerUrl: BUNDLER_URL,
  paymasterUrl: "${rpcUrl}",
});
await smartAccount.sendTransaction(transaction, {
  paymasterServiceData: { mode: PaymasterMode.SPONSORED },
});`,
  },
];

export function OverviewTab({ paymaster, onChange }: { paymaster: PaymasterView; onChange: () => void }) {
  const rpcUrl = rpcUrlOf(paymaster);
  return (
    <>
      <section aria-labelledby="keys">
        <h2 id="keys">Keys</h2>
        <Copyable label="apiKey" text={paymaster.apiKey} />
        <Copyable label="RPC URL" text={rpcUrl} />
        <Copyable label="paymasterId" text={paymaster.paymasterId} />
      </section>
      <section aria-labelledby="snippets">
        <h2 id="snippets">Ready-to-paste snippets</h2>
        <p class="hint">Replace BUNDLER_URL with your bundler's URL; the rest is this paymaster's.</p>
        {snippets(rpcUrl).map((snippet) => (
          <Copyable key={snippet.label} label={snippet.label} text={snippet.code} code />
        ))}
      </section>
      <PauseSponsorship paymaster={paymaster} onChange={onChange} />
      <SponsorInfo paymaster={paymaster} onChange={onChange} />
      <ValidityBlocks paymaster={paymaster} onChange={onChange} />
    </>
  );
}

/** Pausing refuses every sponsorship request of the paymaster at once; its rules and funds stay as they are. */
function PauseSponsorship({ paymaster, onChange }: { paymaster: PaymasterView; onChange: () => void }) {
  const form = useSubmit({});
  const set = (active: boolean) =>
    form.run(async () => {
      await unwrap(
        api.PATCH("/api/v2/public/sdk/paymasterParameters", {
          ...dapp(paymaster.apiKey),
          body: { paymasterId: paymaster.paymasterId, type: "active", active },
        }),
      );
      onChange();
    });
  return (
    <section aria-labelledby="pause">
      <h2 id="pause">Sponsorship</h2>
      <p>
        <span class={paymaster.active ? "state on" : "state off"}>{paymaster.active ? "Active" : "Paused"}</span>{" "}
        {paymaster.active
          ? "The paymaster sponsors what its rules allow."
          : "Every sponsorship request is refused until it is resumed; rules and funds are kept."}
      </p>
      <button type="button" class="secondary" disabled={form.busy} onClick={() => set(!paymaster.active)}>
        {paymaster.active ? "Pause sponsorship" : "Resume sponsorship"}
      </button>
      <FormError message={form.formError} />
    </section>
  );
}
