import { useState } from "preact/hooks";
import { api, dapp, unwrap } from "../api/client";
import type { PaymasterView } from "../api/paymasters";
import { Field, FormError, TextField, useSubmit } from "../ui/forms";

const ICON_TYPES = "image/png,image/webp,image/svg+xml";

/**
 * The sponsor wallets show for this paymaster's operations (ERC-7677's sponsor in the stub): a name, and an icon read
 * from a file as a data URI. The service checks the icon (PNG, WebP or SVG, at most 32,768 characters, an SVG without
 * script) and its message is shown beside the field.
 */
export function SponsorInfo({ paymaster, onChange }: { paymaster: PaymasterView; onChange: () => void }) {
  const [name, setName] = useState(paymaster.sponsor?.name ?? "");
  const [icon, setIcon] = useState<string | undefined>(paymaster.sponsor?.icon);
  const [saved, setSaved] = useState<string>();
  const form = useSubmit({ name: [], icon: [] });
  const send = (sponsor: { name: string | null; icon?: string }) =>
    form.run(async () => {
      await unwrap(
        api.PATCH("/api/v2/public/sdk/paymasterParameters", {
          ...dapp(paymaster.apiKey),
          body: { paymasterId: paymaster.paymasterId, type: "sponsorInfo", ...sponsor },
        }),
      );
      setSaved(sponsor.name === null ? "Wallets are shown no sponsor." : `Wallets are shown ${sponsor.name}.`);
      onChange();
    });
  const pickIcon = (input: HTMLInputElement) => {
    const file = input.files?.[0];
    if (!file) return setIcon(undefined);
    const reader = new FileReader();
    reader.onload = () => setIcon(typeof reader.result === "string" ? reader.result : undefined);
    reader.readAsDataURL(file);
  };
  const submit = (event: Event) => {
    event.preventDefault();
    void send({ name: name.trim(), ...(icon ? { icon } : {}) });
  };
  return (
    <section aria-labelledby="sponsor">
      <h2 id="sponsor">Sponsor shown in wallets</h2>
      <form onSubmit={submit} noValidate>
        <div class="row">
          <TextField
            id="sponsor-name"
            label="Sponsor name"
            value={name}
            onValue={setName}
            error={form.errorOf("name")}
          />
          <Field
            id="sponsor-icon"
            label="Icon (PNG, WebP or SVG)"
            error={form.errorOf("icon")}
            hint="At most about 24 KB; sent to wallets as a data URI."
          >
            {(described) => (
              <input
                {...described}
                type="file"
                name="sponsor-icon"
                accept={ICON_TYPES}
                onChange={(event) => pickIcon(event.currentTarget as HTMLInputElement)}
              />
            )}
          </Field>
          {icon && <img class="sponsor-icon" src={icon} alt="The sponsor's icon" width={48} height={48} />}
        </div>
        <FormError message={form.formError} />
        <div class="row">
          <button type="submit" disabled={form.busy}>
            Save sponsor
          </button>
          <button
            type="button"
            class="secondary"
            disabled={form.busy || paymaster.sponsor === null}
            onClick={() => {
              setIcon(undefined);
              void send({ name: null });
            }}
          >
            Remove sponsor
          </button>
        </div>
        <p aria-live="polite">{saved}</p>
      </form>
    </section>
  );
}
