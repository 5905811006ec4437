import { useState } from "preact/hooks";
import { api, dapp, unwrap } from "../api/client";
import { type PaymasterView, useLoad } from "../api/paymasters";
import { Copyable, FormError, TextField, useSubmit } from "../ui/forms";

const endpointsPath = "/api/v2/public/sdk/event-endpoints" as const;
const endpointPath = "/api/v2/public/sdk/event-endpoints/{id}" as const;

const EVENTS = [
  ["sponsorship.signed", "Signed"],
  ["sponsorship.included", "Included (mined)"],
  ["sponsorship.reverted", "Reverted"],
  ["sponsorship.expired", "Expired unused"],
  ["deposit.low", "Deposit low"],
  ["limit.reached", "Limit reached"],
] as const;
type EventName = (typeof EVENTS)[number][0];

/** How many of an endpoint's latest attempts are shown. */
const RECENT_ATTEMPTS = 20;

/** The paymaster's event endpoints (docs/events.md): add one, its secret shown once; each with its recent deliveries. */
export function EventsTab({ paymaster }: { paymaster: PaymasterView }) {
  const { apiKey } = paymaster;
  const endpoints = useLoad(() => unwrap(api.GET(endpointsPath, dapp(apiKey))), [apiKey]);
  const [url, setUrl] = useState("");
  const [chosen, setChosen] = useState<Set<EventName>>(new Set(["sponsorship.included", "sponsorship.reverted"]));
  const [secret, setSecret] = useState<{ url: string; secret: string; rotated: boolean }>();
  const form = useSubmit({ url: ["url"], events: ["events"] });
  const add = (event: Event) => {
    event.preventDefault();
    void form.run(async () => {
      const created = await unwrap(api.POST(endpointsPath, { ...dapp(apiKey), body: { url, events: [...chosen] } }));
      setSecret({ url: created.url, secret: created.secret, rotated: false });
      setUrl("");
      endpoints.reload();
    });
  };
  const toggle = (name: EventName, on: boolean) => {
    const next = new Set(chosen);
    if (on) next.add(name);
    else next.delete(name);
    setChosen(next);
  };
  return (
    <>
      <section aria-labelledby="event-endpoints">
        <h2 id="event-endpoints">Event endpoints</h2>
        <p class="hint">
          What becomes of each operation, pushed to your URLs as Standard Webhooks (verify them with a Standard Webhooks
          library and the endpoint's secret).
        </p>
        {secret && (
          <div class="card" role="status">
            <p>
              {secret.rotated ? "The new secret" : "The secret"} of <code>{secret.url}</code>, shown this once: keep it
              now.
            </p>
            <Copyable label="Signing secret" text={secret.secret} />
            <button type="button" class="secondary" onClick={() => setSecret(undefined)}>
              I have kept it
            </button>
          </div>
        )}
        {endpoints.error && (
          <p class="error" role="alert">
            {endpoints.error}
          </p>
        )}
        {endpoints.value && endpoints.value.length === 0 && <p>No event endpoint yet.</p>}
        {endpoints.value?.map((endpoint) => (
          <EndpointCard
            key={endpoint.id}
            apiKey={apiKey}
            endpoint={endpoint}
            onChange={endpoints.reload}
            onSecret={(rotated) => setSecret({ url: endpoint.url, secret: rotated, rotated: true })}
          />
        ))}
      </section>
      <section aria-labelledby="add-endpoint">
        <h2 id="add-endpoint">Add an endpoint</h2>
        <form onSubmit={add} noValidate>
          <TextField
            id="endpoint-url"
            label="Endpoint URL"
            type="url"
            value={url}
            onValue={setUrl}
            placeholder="https://hooks.example.com/paymaster"
            error={form.errorOf("url")}
          />
          <fieldset class={form.errorOf("events") ? "methods invalid" : "methods"}>
            <legend>Events to send</legend>
            {EVENTS.map(([name, label]) => (
              <label key={name} class="check">
                <input
                  type="checkbox"
                  name="endpoint-events"
                  value={name}
                  checked={chosen.has(name)}
                  onChange={(event) => toggle(name, (event.currentTarget as HTMLInputElement).checked)}
                />{" "}
                {label} <code>{name}</code>
              </label>
            ))}
            {form.errorOf("events") && (
              <p class="error" role="alert">
                {form.errorOf("events")}
              </p>
            )}
          </fieldset>
          <FormError message={form.formError} />
          <button type="submit" disabled={form.busy}>
            Add endpoint
          </button>
        </form>
      </section>
    </>
  );
}

type Endpoint = NonNullable<Awaited<ReturnType<typeof listOf>>>[number];
const listOf = (apiKey: string) => unwrap(api.GET(endpointsPath, dapp(apiKey)));

/** One endpoint: its state (a line saying why when the service turned it off), its controls and recent deliveries. */
function EndpointCard(props: {
  apiKey: string;
  endpoint: Endpoint;
  onChange: () => void;
  onSecret: (secret: string) => void;
}) {
  const { apiKey, endpoint, onChange } = props;
  const params = { path: { id: endpoint.id } };
  const form = useSubmit({});
  const [showAttempts, setShowAttempts] = useState(false);
  const setEnabled = (enabled: boolean) =>
    form.run(async () => {
      await unwrap(api.PATCH(endpointPath, { ...dapp(apiKey), params, body: { enabled } }));
      onChange();
    });
  const rotate = () =>
    form.run(async () => {
      const rotated = await unwrap(
        api.POST(`${endpointPath}/rotate-secret`, { ...dapp(apiKey), params, body: { graceSeconds: 86_400 } }),
      );
      props.onSecret(rotated.secret);
      onChange();
    });
  const remove = () =>
    form.run(async () => {
      await unwrap(api.DELETE(endpointPath, { ...dapp(apiKey), params }));
      onChange();
    });
  return (
    <article class="card" aria-label={`Endpoint ${endpoint.url}`}>
      <p class="row">
        <code>{endpoint.url}</code>
        <span class={endpoint.enabled ? "state on" : "state off"}>{endpoint.enabled ? "On" : "Off"}</span>
        <span>
          {endpoint.pending} waiting to be delivered
          {endpoint.failingSince !== null && `, failing since ${new Date(endpoint.failingSince).toLocaleString()}`}
        </span>
      </p>
      {endpoint.disabledReason && (
        <p class="error" role="alert">
          Turned off by the service: {endpoint.disabledReason}. Its queue is kept; turn it on again once it answers.
        </p>
      )}
      <p class="hint">Events: {endpoint.events.join(", ")}</p>
      {endpoint.previousSecretUntil !== null && (
        <p class="hint">
          The previous secret also signs until {new Date(endpoint.previousSecretUntil).toLocaleString()}.
        </p>
      )}
      <div class="row">
        <button type="button" class="secondary" onClick={() => setEnabled(!endpoint.enabled)} disabled={form.busy}>
          {endpoint.enabled ? "Turn off" : "Turn on"}
        </button>
        <button type="button" class="secondary" onClick={rotate} disabled={form.busy}>
          Rotate secret (old one valid for a day)
        </button>
        <button type="button" class="secondary" onClick={() => setShowAttempts(!showAttempts)}>
          {showAttempts ? "Hide deliveries" : "Recent deliveries"}
        </button>
        <button type="button" class="danger" onClick={remove} disabled={form.busy}>
          Remove endpoint
        </button>
      </div>
      <FormError message={form.formError} />
      {showAttempts && <Attempts apiKey={apiKey} endpointId={endpoint.id} onReplay={onChange} />}
    </article>
  );
}

/** The endpoint's latest attempts, newest first, each with a button to send its event again. */
function Attempts({ apiKey, endpointId, onReplay }: { apiKey: string; endpointId: string; onReplay: () => void }) {
  const params = { path: { id: endpointId } };
  const attempts = useLoad(
    () =>
      unwrap(
        api.GET(`${endpointPath}/deliveries`, {
          ...dapp(apiKey),
          params: { ...params, query: { limit: String(RECENT_ATTEMPTS) } },
        }),
      ),
    [apiKey, endpointId],
  );
  const form = useSubmit({});
  const [replayed, setReplayed] = useState<string>();
  const replay = (eventId: string) =>
    form.run(async () => {
      await unwrap(api.POST(`${endpointPath}/replay`, { ...dapp(apiKey), params, body: { eventId } }));
      setReplayed(eventId);
      onReplay();
      attempts.reload();
    });
  if (attempts.error)
    return (
      <p class="error" role="alert">
        {attempts.error}
      </p>
    );
  if (!attempts.value) return <p aria-busy="true">Loading…</p>;
  if (attempts.value.length === 0) return <p>No delivery attempted yet.</p>;
  return (
    <div class="table-scroll">
      {replayed && (
        <p role="status">
          <code>{replayed}</code> is queued again.
        </p>
      )}
      <FormError message={form.formError} />
      <table>
        <caption class="visually-hidden">Delivery attempts, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Event</th>
            <th scope="col">#</th>
            <th scope="col">Attempt</th>
            <th scope="col">Outcome</th>
            <th scope="col">Send again</th>
          </tr>
        </thead>
        <tbody>
          {attempts.value.map((attempt) => (
            <tr key={`${attempt.eventId}-${attempt.sequence}-${attempt.attempt}`}>
              <td>{new Date(attempt.at).toLocaleString()}</td>
              <td>
                {attempt.type} <code title={attempt.eventId}>{attempt.eventId.slice(0, 12)}…</code>
              </td>
              <td>{attempt.sequence}</td>
              <td>{attempt.attempt}</td>
              <td>
                <span class={attempt.delivered ? "status mined" : "status refused"}>
                  {attempt.delivered ? "delivered" : "failed"}
                </span>{" "}
                {attempt.statusCode !== null ? `(${attempt.statusCode})` : ""} {attempt.error ?? ""}
              </td>
              <td>
                <button type="button" class="secondary" onClick={() => replay(attempt.eventId)} disabled={form.busy}>
                  Replay
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
