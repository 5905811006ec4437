import { useState } from "preact/hooks";
import { api, dapp, unwrap } from "../api/client";
import { type PaymasterView, useLoad } from "../api/paymasters";
import { Field, FormError, TextField, useSubmit } from "../ui/forms";

const contractsPath = "/api/v2/public/sdk/smart-contract" as const;

/** The names of an ABI's functions, or the reason the text is not an ABI (the API checks it again on submit). */
function functionsOf(abiText: string): { names: string[]; problem?: string } {
  if (abiText.trim() === "") return { names: [] };
  try {
    const abi = JSON.parse(abiText) as unknown;
    if (!Array.isArray(abi)) return { names: [], problem: "The ABI must be a JSON array" };
    const names = abi
      .filter(
        (item): item is { type: string; name: string } => item?.type === "function" && typeof item.name === "string",
      )
      .map((item) => item.name);
    return { names: [...new Set(names)] };
  } catch {
    return { names: [], problem: "The ABI is not valid JSON" };
  }
}

/** A set of checkboxes, one per method, in a fieldset whose legend names it. */
function MethodChoice(props: {
  idPrefix: string;
  legend: string;
  methods: string[];
  chosen: Set<string>;
  onChange: (chosen: Set<string>) => void;
  error?: string;
}) {
  const toggle = (method: string, on: boolean) => {
    const next = new Set(props.chosen);
    if (on) next.add(method);
    else next.delete(method);
    props.onChange(next);
  };
  return (
    <fieldset class={props.error ? "methods invalid" : "methods"}>
      <legend>{props.legend}</legend>
      {props.methods.length === 0 && <p class="hint">No function in the ABI.</p>}
      {props.methods.map((method) => (
        <label key={method} class="check">
          <input
            type="checkbox"
            name={`${props.idPrefix}-method`}
            value={method}
            checked={props.chosen.has(method)}
            onChange={(event) => toggle(method, (event.currentTarget as HTMLInputElement).checked)}
          />{" "}
          <code>{method}</code>
        </label>
      ))}
      {props.error && (
        <p class="error" role="alert">
          {props.error}
        </p>
      )}
    </fieldset>
  );
}

/** The contracts whose calls the paymaster sponsors, and which of their methods. */
export function ContractsTab({ paymaster }: { paymaster: PaymasterView }) {
  const contracts = useLoad(() => unwrap(api.GET(contractsPath, dapp(paymaster.apiKey))), [paymaster.apiKey]);
  return (
    <>
      <section aria-labelledby="contracts">
        <h2 id="contracts">Sponsored contracts</h2>
        {contracts.error && (
          <p class="error" role="alert">
            {contracts.error}
          </p>
        )}
        {contracts.value?.length === 0 && <p>No contract yet: operations are sponsored only for whitelisted calls.</p>}
        {contracts.value?.map((contract) => (
          <ContractCard
            key={contract.address}
            apiKey={paymaster.apiKey}
            contract={contract}
            onChange={contracts.reload}
          />
        ))}
      </section>
      <AddContract apiKey={paymaster.apiKey} onAdded={contracts.reload} />
    </>
  );
}

function ContractCard(props: {
  apiKey: string;
  contract: { name: string; address: string; methods: string[]; whitelistedMethods: string[] };
  onChange: () => void;
}) {
  const { contract } = props;
  const [chosen, setChosen] = useState(new Set(contract.whitelistedMethods));
  const [saved, setSaved] = useState<string>();
  const form = useSubmit({ whitelistedMethods: [], address: ["Smart contract not found"] });
  const id = `contract-${contract.address.toLowerCase()}`;
  const save = () =>
    form.run(async () => {
      await unwrap(
        api.PATCH(contractsPath, {
          ...dapp(props.apiKey),
          body: { address: contract.address, whitelistedMethods: [...chosen] },
        }),
      );
      setSaved("Saved.");
      props.onChange();
    });
  const remove = () =>
    form.run(async () => {
      if (!confirm(`Stop sponsoring ${contract.name}?`)) return;
      await unwrap(api.DELETE(contractsPath, { ...dapp(props.apiKey), body: { address: contract.address } }));
      props.onChange();
    });
  return (
    <article class="card" aria-labelledby={`${id}-name`}>
      <h3 id={`${id}-name`}>
        {contract.name} <code class="muted">{contract.address}</code>
      </h3>
      <MethodChoice
        idPrefix={id}
        legend={`Sponsored methods of ${contract.name}`}
        methods={contract.methods}
        chosen={chosen}
        onChange={(next) => {
          setChosen(next);
          setSaved(undefined);
        }}
        error={form.errorOf("whitelistedMethods")}
      />
      <div class="row">
        <button type="button" onClick={save} disabled={form.busy}>
          Save methods
        </button>
        <button type="button" class="danger" onClick={remove} disabled={form.busy}>
          Remove contract
        </button>
        <span aria-live="polite">{saved}</span>
      </div>
      <FormError message={form.formError ?? form.errorOf("address")} />
    </article>
  );
}

function AddContract({ apiKey, onAdded }: { apiKey: string; onAdded: () => void }) {
  const [name, setName] = useState("");
  const [address, setAddress] = useState("");
  const [abi, setAbi] = useState("");
  const [chosen, setChosen] = useState(new Set<string>());
  const form = useSubmit({ name: [], address: [], abi: ["ABI"], whitelistedMethods: ["whitelisted"] });
  const functions = functionsOf(abi);

  const upload = async (event: Event) => {
    const file = (event.currentTarget as HTMLInputElement).files?.[0];
    if (!file) return;
    const text = await file.text();
    // A compiler's artifact holds the ABI under "abi"; a bare ABI is taken as it is.
    try {
      const parsed = JSON.parse(text) as { abi?: unknown };
      setAbi(parsed && !Array.isArray(parsed) && parsed.abi ? JSON.stringify(parsed.abi) : text);
    } catch {
      setAbi(text);
    }
    setChosen(new Set());
  };

  const submit = (event: Event) => {
    event.preventDefault();
    void form.run(async () => {
      await unwrap(
        api.POST(contractsPath, {
          ...dapp(apiKey),
          body: { name, address: address.trim(), abi, whitelistedMethods: [...chosen] },
        }),
      );
      setName("");
      setAddress("");
      setAbi("");
      setChosen(new Set());
      onAdded();
    });
  };

  return (
    <section aria-labelledby="add-contract">
      <h2 id="add-contract">Add a contract</h2>
      <form onSubmit={submit} noValidate>
        <TextField
          id="contract-name"
          label="Contract name"
          value={name}
          onValue={setName}
          error={form.errorOf("name")}
        />
        <TextField
          id="contract-address"
          label="Contract address"
          value={address}
          onValue={setAddress}
          placeholder="0x…"
          spellcheck={false}
          error={form.errorOf("address")}
        />
        <Field id="contract-abi" label="ABI (JSON)" error={form.errorOf("abi") ?? functions.problem}>
          {(described) => (
            <textarea
              {...described}
              name="contract-abi"
              rows={6}
              spellcheck={false}
              value={abi}
              onInput={(event) => {
                setAbi((event.currentTarget as HTMLTextAreaElement).value);
                setChosen(new Set());
              }}
            />
          )}
        </Field>
        <Field id="contract-abi-file" label="Or upload an ABI file">
          {(described) => <input {...described} type="file" accept=".json,application/json" onChange={upload} />}
        </Field>
        {functions.names.length > 0 && (
          <MethodChoice
            idPrefix="new-contract"
            legend="Sponsored methods"
            methods={functions.names}
            chosen={chosen}
            onChange={setChosen}
            error={form.errorOf("whitelistedMethods")}
          />
        )}
        <FormError message={form.formError} />
        <button type="submit" disabled={form.busy}>
          Add contract
        </button>
      </form>
    </section>
  );
}
