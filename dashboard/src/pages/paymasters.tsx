import { useState } from "preact/hooks";
import { api, unwrap } from "../api/client";
import { chainName, listChains, listPaymasters, useLoad } from "../api/paymasters";
import { href } from "../route";
import { ChainServes } from "../ui/chainServes";
import { FormError, SelectField, TextField, useSubmit } from "../ui/forms";
import { shortHex } from "../wei";

/** The account's paymasters, and a new one. */
export function PaymastersPage() {
  const paymasters = useLoad(listPaymasters);
  const chains = useLoad(listChains);
  return (
    <>
      <h1>Paymasters</h1>
      {paymasters.error && (
        <p class="error" role="alert">
          {paymasters.error}
        </p>
      )}
      {paymasters.value && paymasters.value.length === 0 && <p>No paymaster yet: create the first one below.</p>}
      {paymasters.value && paymasters.value.length > 0 && (
        <div class="table-scroll">
          <table>
            <caption class="visually-hidden">Your paymasters</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Chain</th>
                <th scope="col">apiKey</th>
                <th scope="col">Funding wallet</th>
                <th scope="col">Sponsoring</th>
              </tr>
            </thead>
            <tbody>
              {paymasters.value.map((paymaster) => (
                <tr key={paymaster.paymasterId}>
                  <th scope="row">
                    <a href={href("paymasters", paymaster.paymasterId, "overview")}>{paymaster.name}</a>
                  </th>
                  <td>
                    {chainName(chains.value, paymaster.chainId)} ({paymaster.chainId}){" "}
                    <ChainServes chain={chains.value?.find((chain) => chain.chainId === paymaster.chainId)} />
                  </td>
                  <td>
                    <code>{paymaster.apiKey}</code>
                  </td>
                  <td>
                    {paymaster.fundingWalletAddress ? (
                      <code title={paymaster.fundingWalletAddress}>{shortHex(paymaster.fundingWalletAddress)}</code>
                    ) : (
                      "not linked"
                    )}
                  </td>
                  <td>
                    <span class={paymaster.active ? "state on" : "state off"}>
                      {paymaster.active ? "Active" : "Paused"}
                    </span>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <CreatePaymaster chains={chains.value ?? []} chainsError={chains.error} onCreated={paymasters.reload} />
    </>
  );
}

function CreatePaymaster(props: {
  chains: { chainId: number; name: string }[];
  chainsError?: string;
  onCreated: () => void;
}) {
  const [name, setName] = useState("");
  const [chainId, setChainId] = useState("");
  const form = useSubmit({ name: ["paymaster_name_exists"], chainId: ["Chain ID"], version: [] });
  const chosen = chainId || String(props.chains[0]?.chainId ?? "");
  const submit = (event: Event) => {
    event.preventDefault();
    void form.run(async () => {
      const created = await unwrap(
        api.POST("/api/v2/public/sdk/paymasterParameters", {
          body: { name, type: "HYBRID", chainId: Number(chosen), version: "1.0.0" },
        }),
      );
      setName("");
      props.onCreated();
      location.hash = href("paymasters", created.paymasterId, "overview");
    });
  };
  return (
    <section aria-labelledby="create-paymaster">
      <h2 id="create-paymaster">Create paymaster</h2>
      <form onSubmit={submit} noValidate class="inline-form">
        <TextField id="paymaster-name" label="Name" value={name} onValue={setName} error={form.errorOf("name")} />
        <SelectField
          id="paymaster-chain"
          label="Chain"
          value={chosen}
          onValue={setChainId}
          options={props.chains.map((chain) => ({
            value: String(chain.chainId),
            label: `${chain.name} (${chain.chainId})`,
          }))}
          error={form.errorOf("chainId") ?? props.chainsError}
        />
        <FormError message={form.formError ?? form.errorOf("version")} />
        <button type="submit" disabled={form.busy}>
          Create paymaster
        </button>
      </form>
    </section>
  );
}
