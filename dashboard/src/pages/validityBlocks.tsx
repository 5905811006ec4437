import { useState } from "preact/hooks";
import { api, dapp, unwrap } from "../api/client";
import type { PaymasterView } from "../api/paymasters";
import { FormError, TextField, useSubmit } from "../ui/forms";

/**
 * How long this paymaster's EntryPoint v0.9 signatures stay valid: a number of blocks past the chain's head, or (the
 * default) seconds. The number is sent as typed; the service bounds it and its message is shown beside the field.
 */
export function ValidityBlocks({ paymaster, onChange }: { paymaster: PaymasterView; onChange: () => void }) {
  const [blocks, setBlocks] = useState(paymaster.validityBlocks === null ? "" : String(paymaster.validityBlocks));
  const [saved, setSaved] = useState<string>();
  const form = useSubmit({ blocks: [] });
  const send = (value: number | string | null) =>
    form.run(async () => {
      await unwrap(
        api.PATCH("/api/v2/public/sdk/paymasterParameters", {
          ...dapp(paymaster.apiKey),
          // A text that is not a whole number goes as typed, for the service's message about it.
          body: { paymasterId: paymaster.paymasterId, type: "validityBlocks", blocks: value as number | null },
        }),
      );
      setSaved(
        value === null
          ? "EntryPoint v0.9 signatures are valid for a time, in seconds."
          : `EntryPoint v0.9 signatures are valid for ${value} blocks.`,
      );
      if (value === null) setBlocks("");
      onChange();
    });
  const submit = (event: Event) => {
    event.preventDefault();
    const typed = blocks.trim();
    void send(/^\d+$/.test(typed) ? Number(typed) : typed);
  };
  return (
    <section aria-labelledby="validity-blocks">
      <h2 id="validity-blocks">Validity in blocks (EntryPoint v0.9)</h2>
      <p class="hint">
        EntryPoint v0.9 can read a signature's window as block numbers. Earlier EntryPoints and ERC20 mode keep windows
        in seconds. Bundlers that compare the window with the clock (Alto 0.0.20) refuse windows in blocks.
      </p>
      <form onSubmit={submit} noValidate>
        <div class="row">
          <TextField
            id="validity-blocks-count"
            label="Blocks past the chain's head"
            inputMode="numeric"
            value={blocks}
            onValue={setBlocks}
            error={form.errorOf("blocks")}
            hint="A whole number from 1 to 100,000."
          />
        </div>
        <FormError message={form.formError} />
        <div class="row">
          <button type="submit" disabled={form.busy}>
            Use blocks
          </button>
          <button
            type="button"
            class="secondary"
            disabled={form.busy || paymaster.validityBlocks === null}
            onClick={() => void send(null)}
          >
            Use seconds
          </button>
        </div>
        <p aria-live="polite">{saved}</p>
      </form>
    </section>
  );
}
