import { useState } from "preact/hooks";
import { api, dapp, unwrap } from "../api/client";
import { type PaymasterView, useLoad } from "../api/paymasters";
import { FormError, useSubmit } from "../ui/forms";
import { RuleForm, type RuleKind, ruleKindLabel } from "./ruleForm";
import { WebhooksSection } from "./webhooks";

const policiesPath = "/api/v2/public/sdk/paymaster-policy" as const;

export interface Rule {
  _id: string;
  name: string;
  policyType: string;
  active: boolean;
  policyData: Record<string, unknown>;
}

interface Usage {
  policyId: string;
  threshold: number;
  thresholdType: string;
  used?: string;
  remaining?: string;
  senders?: { sender: string; used: string; remaining: string }[];
  startTimeInEpoch: number;
  durationInMs: number;
}

/** The paymaster's rules (every kind) with their state and, for spending limits, the current cycle's use. */
export function RulesTab({ paymaster }: { paymaster: PaymasterView }) {
  const rules = useLoad(
    async () =>
      ((await unwrap(api.GET(policiesPath, dapp(paymaster.apiKey)))) as Rule[]).filter(
        (rule) => rule.policyType !== "WHITELISTED_CONTRACT",
      ),
    [paymaster.apiKey],
  );
  const usage = useLoad(
    () => unwrap(api.GET("/api/v2/public/sdk/paymaster-policy/usage", dapp(paymaster.apiKey))) as Promise<Usage[]>,
    [paymaster.apiKey],
  );
  const reload = () => {
    rules.reload();
    usage.reload();
  };
  return (
    <>
      <section aria-labelledby="rules">
        <h2 id="rules">Rules</h2>
        {rules.error && (
          <p class="error" role="alert">
            {rules.error}
          </p>
        )}
        {rules.value?.length === 0 && <p>No rule yet.</p>}
        {rules.value?.map((rule) => (
          <RuleCard
            key={rule._id}
            apiKey={paymaster.apiKey}
            rule={rule}
            usage={usage.value?.find((entry) => entry.policyId === rule._id)}
            onChange={reload}
          />
        ))}
      </section>
      <section aria-labelledby="add-rule">
        <h2 id="add-rule">Add a rule</h2>
        <RuleForm apiKey={paymaster.apiKey} onSaved={reload} />
      </section>
      <WebhooksSection apiKey={paymaster.apiKey} />
    </>
  );
}

/** What a rule does, in a line. */
function describe(rule: Rule): string {
  const data = rule.policyData;
  switch (rule.policyType) {
    case "PAYMASTER_SA_LIMIT": {
      const per = data.type === "SMART_ACCOUNT" ? "per smart account" : "for the whole paymaster";
      const unit = data.thresholdType === "COUNT" ? "operations" : data.thresholdType === "USD" ? "USD" : "ETH";
      const cycle = data.cycleDuration as { value?: number; unit?: string } | undefined;
      const hours = Number(data.durationInMs) / 3_600_000;
      const every =
        cycle?.value !== undefined && cycle.unit
          ? `${cycle.value} ${cycle.unit}${cycle.value === 1 ? "" : "s"}`
          : hours % 24 === 0
            ? `${hours / 24} day(s)`
            : `${hours} hour(s)`;
      return `At most ${data.threshold} ${unit} ${per} every ${every}`;
    }
    case "WEBHOOK":
      return `Asks ${String(data.url)} before sponsoring`;
    case "WALLET_DEPLOYMENT":
      return "Sponsors operations that deploy a wallet";
    case "MAX_COST_PER_OP":
      return `Refuses an operation whose worst case costs more than ${data.threshold} ${data.thresholdType === "USD" ? "USD" : "ETH"}`;
    case "TIME_WINDOW": {
      const at = (ms: unknown) => (typeof ms === "number" ? new Date(ms).toISOString().replace(".000Z", "Z") : "…");
      return `Sponsors only from ${at(data.startTimeInEpoch)} to ${at(data.endTimeInEpoch)}`;
    }
    case "SENDER_ALLOWLIST":
    case "SENDER_BLOCKLIST": {
      const count = Array.isArray(data.addresses) ? data.addresses.length : 0;
      const senders = `${count} sender${count === 1 ? "" : "s"}`;
      return rule.policyType === "SENDER_ALLOWLIST"
        ? `Sponsors only these ${senders}`
        : `Never sponsors these ${senders}`;
    }
    case "MAX_GAS_PRICE": {
      const priority =
        data.maxPriorityFeePerGasGwei === undefined ? "" : `, priority fee above ${data.maxPriorityFeePerGasGwei} gwei`;
      return `Refuses an operation whose maxFeePerGas is above ${data.maxFeePerGasGwei} gwei${priority}`;
    }
    case "RATE_LIMIT": {
      const per = data.scope === "sender" ? "smart account" : data.scope === "origin" ? "web origin" : "client address";
      return `At most ${data.limit} requests per ${data.windowSeconds} s per ${per}; more get HTTP 429`;
    }
    default:
      return JSON.stringify(data);
  }
}

function UsageBar({ usage }: { usage: Usage }) {
  const unit = usage.thresholdType === "COUNT" ? "operations" : usage.thresholdType === "USD" ? "USD" : "ETH";
  const cycleEnds = new Date(usage.startTimeInEpoch + usage.durationInMs).toLocaleString();
  const rows =
    usage.used !== undefined
      ? [{ who: "This cycle", used: usage.used }]
      : (usage.senders ?? []).slice(0, 10).map((entry) => ({ who: entry.sender, used: entry.used }));
  return (
    <div class="usage">
      {rows.length === 0 && <p class="hint">No use in this cycle yet.</p>}
      {rows.map((row) => {
        const used = Number(row.used);
        const percent = usage.threshold > 0 ? Math.min(100, (used / usage.threshold) * 100) : 0;
        const label = `${row.who}: ${row.used} of ${usage.threshold} ${unit} used (${percent < 10 ? percent.toFixed(1) : percent.toFixed(0)}%)`;
        return (
          <div key={row.who} class="usage-row">
            <meter min={0} max={usage.threshold} value={used} high={usage.threshold * 0.8} aria-label={label} />
            <span>{label}</span>
          </div>
        );
      })}
      <p class="hint">The cycle ends {cycleEnds}.</p>
    </div>
  );
}

function RuleCard(props: { apiKey: string; rule: Rule; usage?: Usage; onChange: () => void }) {
  const { rule } = props;
  const [editing, setEditing] = useState(false);
  const form = useSubmit({});
  const setActive = (active: boolean) =>
    form.run(async () => {
      const path = active
        ? "/api/v2/public/sdk/paymaster-policy/activate/{policyId}"
        : "/api/v2/public/sdk/paymaster-policy/deactivate/{policyId}";
      await unwrap(api.PATCH(path, { ...dapp(props.apiKey), params: { path: { policyId: rule._id } } }));
      props.onChange();
    });
  const id = `rule-${rule._id}`;
  return (
    <article class="card" aria-labelledby={`${id}-name`}>
      <h3 id={`${id}-name`}>
        {rule.name} <span class="tag">{ruleKindLabel(rule.policyType)}</span>{" "}
        <span class={rule.active ? "state on" : "state off"}>{rule.active ? "Active" : "Paused"}</span>
      </h3>
      <p>{describe(rule)}</p>
      {Array.isArray(rule.policyData.addresses) && rule.policyData.addresses.length > 0 && (
        <details>
          <summary>The addresses</summary>
          <ul class="plain">
            {(rule.policyData.addresses as string[]).slice(0, 200).map((address) => (
              <li key={address}>
                <code>{address}</code>
              </li>
            ))}
          </ul>
        </details>
      )}
      {props.usage && <UsageBar usage={props.usage} />}
      <div class="row">
        {rule.active ? (
          <button type="button" class="secondary" onClick={() => setActive(false)} disabled={form.busy}>
            Pause {rule.name}
          </button>
        ) : (
          <button type="button" class="secondary" onClick={() => setActive(true)} disabled={form.busy}>
            Resume {rule.name}
          </button>
        )}
        <button type="button" class="secondary" aria-expanded={editing} onClick={() => setEditing(!editing)}>
          Edit {rule.name}
        </button>
      </div>
      <FormError message={form.formError} />
      {editing && (
        <RuleForm
          apiKey={props.apiKey}
          editing={{ ...rule, policyType: rule.policyType as RuleKind }}
          onSaved={() => {
            setEditing(false);
            props.onChange();
          }}
        />
      )}
    </article>
  );
}
