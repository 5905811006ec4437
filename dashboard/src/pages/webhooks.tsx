import { useState } from "preact/hooks";
import { api, dapp, unwrap } from "../api/client";
import { useLoad } from "../api/paymasters";
import { FormError, SelectField, TextField, useSubmit } from "../ui/forms";

const webhookPath = "/api/v2/public/sdk/webhook" as const;

/** The registered webhooks, and the key their requests are signed with, shown only when asked for. */
export function WebhooksSection({ apiKey }: { apiKey: string }) {
  const webhooks = useLoad(() => unwrap(api.GET(webhookPath, dapp(apiKey))), [apiKey]);
  const [url, setUrl] = useState("");
  const [method, setMethod] = useState("POST");
  const form = useSubmit({ webhookUrl: ["url"], requestType: [] });
  const rowForm = useSubmit({});
  const add = (event: Event) => {
    event.preventDefault();
    void form.run(async () => {
      await unwrap(
        api.POST(webhookPath, { ...dapp(apiKey), body: { webhookUrl: url, requestType: method as "GET" | "POST" } }),
      );
      setUrl("");
      webhooks.reload();
    });
  };
  const toggle = (webhookId: string, active: boolean) =>
    rowForm.run(async () => {
      await unwrap(api.PATCH(webhookPath, { ...dapp(apiKey), body: { webhookId, active } }));
      webhooks.reload();
    });
  const remove = (webhookId: string) =>
    rowForm.run(async () => {
      await unwrap(api.DELETE(webhookPath, { ...dapp(apiKey), body: { webhookId } }));
      webhooks.reload();
    });
  return (
    <section aria-labelledby="webhooks">
      <h2 id="webhooks">Webhooks</h2>
      {webhooks.error && (
        <p class="error" role="alert">
          {webhooks.error}
        </p>
      )}
      {webhooks.value && webhooks.value.length > 0 && (
        <ul class="plain">
          {webhooks.value.map((hook) => (
            <li key={hook.webhookId} class="row">
              <code>
                {hook.requestType} {hook.webhookUrl}
              </code>
              <span class={hook.active ? "state on" : "state off"}>{hook.active ? "Active" : "Paused"}</span>
              <button type="button" class="secondary" onClick={() => toggle(hook.webhookId, !hook.active)}>
                {hook.active ? "Pause webhook" : "Resume webhook"}
              </button>
              <button type="button" class="danger" onClick={() => remove(hook.webhookId)}>
                Remove webhook
              </button>
            </li>
          ))}
        </ul>
      )}
      <FormError message={rowForm.formError} />
      <form onSubmit={add} noValidate>
        <div class="row">
          <TextField
            id="webhook-url"
            label="Webhook URL"
            type="url"
            value={url}
            onValue={setUrl}
            error={form.errorOf("webhookUrl")}
          />
          <SelectField
            id="webhook-method"
            label="Request method"
            value={method}
            onValue={setMethod}
            options={[
              { value: "POST", label: "POST" },
              { value: "GET", label: "GET" },
            ]}
            error={form.errorOf("requestType")}
          />
        </div>
        <FormError message={form.formError} />
        <button type="submit" disabled={form.busy}>
          Add webhook
        </button>
      </form>
      <SigningSecret apiKey={apiKey} />
    </section>
  );
}

/** The signing key is fetched on request and shown until hidden; it is never kept anywhere else. */
function SigningSecret({ apiKey }: { apiKey: string }) {
  const [secret, setSecret] = useState<string>();
  const form = useSubmit({});
  const show = () =>
    form.run(async () => {
      const data = await unwrap(api.GET("/api/v2/public/sdk/webhook-secret", dapp(apiKey)));
      setSecret(data.webhookSecret);
    });
  return (
    <div>
      <h3>Signing secret</h3>
      <p class="hint">
        Every webhook request carries <code>x-paymaster-signature</code>, an HMAC with this key: check it to know the
        request came from this service.
      </p>
      {secret ? (
        <>
          <code class="value secret">{secret}</code>
          <button type="button" class="secondary" onClick={() => setSecret(undefined)}>
            Hide signing secret
          </button>
        </>
      ) : (
        <button type="button" class="secondary" onClick={show} disabled={form.busy}>
          Show signing secret
        </button>
      )}
      <FormError message={form.formError} />
    </div>
  );
}
