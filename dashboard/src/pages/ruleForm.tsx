import { useState } from "preact/hooks";
import { api, dapp, unwrap } from "../api/client";
import type { paths } from "../api/schema";
import { Field, FormError, SelectField, TextField, useSubmit } from "../ui/forms";

type CreateRuleBody =
  paths["/api/v2/public/sdk/paymaster-policy"]["post"]["requestBody"]["content"]["application/json"];

/** The rule kinds the dashboard creates, with the words it shows for them. */
const KINDS = [
  ["PAYMASTER_SA_LIMIT", "Spending limit"],
  ["WEBHOOK", "Webhook check"],
  ["WALLET_DEPLOYMENT", "Wallet deployment"],
  ["MAX_COST_PER_OP", "Cost cap per operation"],
  ["TIME_WINDOW", "Time window"],
  ["SENDER_ALLOWLIST", "Sender allowlist"],
  ["SENDER_BLOCKLIST", "Sender blocklist"],
  ["MAX_GAS_PRICE", "Gas price cap"],
  ["RATE_LIMIT", "Request quota"],
] as const;
export type RuleKind = (typeof KINDS)[number][0];

export const ruleKindLabel = (kind: string) => KINDS.find(([id]) => id === kind)?.[1] ?? kind;

const CYCLE_UNITS = ["minute", "hour", "day", "week", "month"] as const;
type CycleUnit = (typeof CYCLE_UNITS)[number];
type ThresholdType = "COUNT" | "NATIVE_ASSET" | "USD";

/** The form's fields and the names the API's messages give them. */
const FIELDS = {
  name: ["Policy name"],
  policyType: [],
  type: ["policyData.type"],
  thresholdType: ["policyData.thresholdType"],
  threshold: ["policyData.threshold"],
  cycleValue: ["cycleDuration", "policyData.cycleDuration", "policyData.cycleDuration.value", "cycleDuration.value"],
  cycleUnit: ["policyData.cycleDuration.unit", "cycleDuration.unit"],
  url: ["policyData.url"],
  start: ["policyData.startTimeInEpoch", "startTimeInEpoch", "policyData"],
  end: ["policyData.endTimeInEpoch", "endTimeInEpoch"],
  addresses: ["policyData.addresses"],
  maxFee: ["policyData.maxFeePerGasGwei"],
  maxPriorityFee: ["policyData.maxPriorityFeePerGasGwei"],
  quotaScope: ["policyData.scope"],
  quotaLimit: ["policyData.limit"],
  quotaWindow: ["policyData.windowSeconds"],
} as const;

type QuotaScope = "ip" | "sender" | "origin";

/** A datetime-local value (the browser's time zone) as ms since the epoch; undefined when empty. */
const msOf = (local: string) => (local ? new Date(local).getTime() : undefined);
const localOf = (ms: unknown) =>
  typeof ms === "number" ? new Date(ms - new Date(ms).getTimezoneOffset() * 60_000).toISOString().slice(0, 16) : "";

/** Addresses typed one per line (or separated by commas or spaces). */
const addressesOf = (text: string) => text.split(/[\s,;]+/).filter(Boolean);

/** A limit's cycle as it was created ({value, unit}), or read back from its length in ms. */
function cycleOf(data: Record<string, unknown>): { value: number; unit: CycleUnit } {
  const given = data.cycleDuration as { value?: unknown; unit?: unknown } | undefined;
  if (given && typeof given.value === "number" && CYCLE_UNITS.includes(given.unit as CycleUnit)) {
    return { value: given.value, unit: given.unit as CycleUnit };
  }
  const hours = typeof data.durationInMs === "number" ? data.durationInMs / 3_600_000 : 24;
  return hours % 24 === 0 ? { value: hours / 24, unit: "day" } : { value: hours, unit: "hour" };
}

export interface EditedRule {
  _id: string;
  name: string;
  policyType: RuleKind;
  policyData: Record<string, unknown>;
}

/**
 * Creates a rule of any kind, or changes one (`editing`): a spending limit through its own update, which restarts the
 * cycle; every other kind through the general update, which replaces its settings whole.
 */
export function RuleForm({ apiKey, editing, onSaved }: { apiKey: string; editing?: EditedRule; onSaved: () => void }) {
  const data = editing?.policyData ?? {};
  const cycle = cycleOf(data);
  const [name, setName] = useState(editing?.name ?? "");
  const [kind, setKind] = useState<RuleKind>(editing?.policyType ?? "PAYMASTER_SA_LIMIT");
  const [limitType, setLimitType] = useState(String(data.type ?? "PAYMASTER"));
  const [thresholdType, setThresholdType] = useState(String(data.thresholdType ?? "NATIVE_ASSET"));
  const [threshold, setThreshold] = useState(data.threshold === undefined ? "" : String(data.threshold));
  const [cycleUnit, setCycleUnit] = useState<string>(cycle.unit);
  const [cycleValue, setCycleValue] = useState(String(cycle.value));
  const [url, setUrl] = useState(typeof data.url === "string" ? data.url : "");
  const [start, setStart] = useState(localOf(data.startTimeInEpoch));
  const [end, setEnd] = useState(localOf(data.endTimeInEpoch));
  const [addresses, setAddresses] = useState(Array.isArray(data.addresses) ? data.addresses.join("\n") : "");
  const text = (value: unknown) => (value === undefined ? "" : String(value));
  const [maxFee, setMaxFee] = useState(text(data.maxFeePerGasGwei));
  const [maxPriorityFee, setMaxPriorityFee] = useState(text(data.maxPriorityFeePerGasGwei));
  const [quotaScope, setQuotaScope] = useState(String(data.scope ?? "ip"));
  const [quotaLimit, setQuotaLimit] = useState(text(data.limit ?? 60));
  const [quotaWindow, setQuotaWindow] = useState(text(data.windowSeconds ?? 60));
  const form = useSubmit(FIELDS);
  const prefix = editing ? `edit-${editing._id}` : "new-rule";

  /** The settings of the chosen kind, in the shape the API takes on creation and on the general update. */
  const policyData = () => {
    const cycleDuration = { value: Number(cycleValue), unit: cycleUnit as CycleUnit };
    switch (kind) {
      case "PAYMASTER_SA_LIMIT":
        return {
          type: limitType as "PAYMASTER" | "SMART_ACCOUNT",
          thresholdType: thresholdType as ThresholdType,
          threshold: Number(threshold),
          cycleDuration,
        };
      case "WEBHOOK":
        return { url };
      case "WALLET_DEPLOYMENT":
        return {};
      case "MAX_COST_PER_OP":
        return { threshold: Number(threshold), thresholdType: thresholdType as "NATIVE_ASSET" | "USD" };
      case "TIME_WINDOW":
        return { startTimeInEpoch: msOf(start), endTimeInEpoch: msOf(end) };
      case "SENDER_ALLOWLIST":
      case "SENDER_BLOCKLIST":
        return { addresses: addressesOf(addresses) };
      case "MAX_GAS_PRICE":
        return {
          maxFeePerGasGwei: Number(maxFee),
          ...(maxPriorityFee.trim() === "" ? {} : { maxPriorityFeePerGasGwei: Number(maxPriorityFee) }),
        };
      case "RATE_LIMIT":
        return { scope: quotaScope as QuotaScope, limit: Number(quotaLimit), windowSeconds: Number(quotaWindow) };
    }
  };

  const submit = (event: Event) => {
    event.preventDefault();
    void form.run(async () => {
      const options = dapp(apiKey);
      if (editing?.policyType === "PAYMASTER_SA_LIMIT") {
        await unwrap(
          api.PATCH("/api/v2/public/sdk/paymaster-policy/limit/{policyId}", {
            ...options,
            params: { path: { policyId: editing._id } },
            body: {
              name,
              threshold: Number(threshold),
              thresholdType: thresholdType as ThresholdType,
              cycleDuration: { value: Number(cycleValue), unit: cycleUnit as CycleUnit },
            },
          }),
        );
      } else if (editing) {
        await unwrap(
          api.PATCH("/api/v2/public/sdk/paymaster-policy/{policyId}", {
            ...options,
            params: { path: { policyId: editing._id } },
            body: { name, policyData: policyData() },
          }),
        );
      } else {
        // policyData() gives the settings of `kind`: the pair is one member of the API's union of bodies.
        const body = { name, policyType: kind, policyData: policyData() } as CreateRuleBody;
        await unwrap(api.POST("/api/v2/public/sdk/paymaster-policy", { ...options, body }));
        setName("");
        setThreshold("");
        setUrl("");
        setAddresses("");
      }
      onSaved();
    });
  };

  const isLimit = kind === "PAYMASTER_SA_LIMIT";
  const unitLabel = thresholdType === "COUNT" ? "operations" : thresholdType === "USD" ? "USD" : "ETH";
  return (
    <form onSubmit={submit} noValidate class="rule-form">
      <TextField id={`${prefix}-name`} label="Rule name" value={name} onValue={setName} error={form.errorOf("name")} />
      {!editing && (
        <SelectField
          id={`${prefix}-kind`}
          label="Kind"
          value={kind}
          onValue={(value) => {
            setKind(value as RuleKind);
            if (value === "MAX_COST_PER_OP" && thresholdType === "COUNT") setThresholdType("NATIVE_ASSET");
          }}
          options={KINDS.map(([value, label]) => ({ value, label }))}
          error={form.errorOf("policyType")}
        />
      )}
      {isLimit && !editing && (
        <SelectField
          id={`${prefix}-scope`}
          label="Applies to"
          value={limitType}
          onValue={setLimitType}
          options={[
            { value: "PAYMASTER", label: "The whole paymaster" },
            { value: "SMART_ACCOUNT", label: "Each smart account" },
          ]}
          error={form.errorOf("type")}
        />
      )}
      {(isLimit || kind === "MAX_COST_PER_OP") && (
        <SelectField
          id={`${prefix}-unit`}
          label="Counted in"
          value={thresholdType}
          onValue={setThresholdType}
          options={[
            { value: "NATIVE_ASSET", label: "Gas spend (ETH)" },
            { value: "USD", label: "Gas spend (USD)" },
            ...(isLimit ? [{ value: "COUNT", label: "Operations" }] : []),
          ]}
          error={form.errorOf("thresholdType")}
          hint="USD needs the chain's native token price in the service's chains file."
        />
      )}
      {(isLimit || kind === "MAX_COST_PER_OP") && (
        <TextField
          id={`${prefix}-threshold`}
          label={isLimit ? `Threshold (${unitLabel})` : `Most an operation may cost (${unitLabel})`}
          inputMode="decimal"
          value={threshold}
          onValue={setThreshold}
          error={form.errorOf("threshold")}
        />
      )}
      {isLimit && (
        <div class="row">
          <TextField
            id={`${prefix}-cycle`}
            label="Cycle length"
            inputMode="numeric"
            value={cycleValue}
            onValue={setCycleValue}
            error={form.errorOf("cycleValue")}
          />
          <SelectField
            id={`${prefix}-cycle-unit`}
            label="Cycle unit"
            value={cycleUnit}
            onValue={setCycleUnit}
            options={CYCLE_UNITS.map((unit) => ({
              value: unit,
              label: unit === "week" || unit === "month" ? `${unit}s (calendar, UTC)` : `${unit}s`,
            }))}
            error={form.errorOf("cycleUnit")}
          />
        </div>
      )}
      {kind === "WEBHOOK" && (
        <TextField
          id={`${prefix}-url`}
          label="Webhook URL"
          type="url"
          value={url}
          onValue={setUrl}
          placeholder="https://"
          error={form.errorOf("url")}
          hint="Called before each sponsorship; it answers whether to sponsor."
        />
      )}
      {kind === "TIME_WINDOW" && (
        <div class="row">
          <TextField
            id={`${prefix}-start`}
            label="From (your local time)"
            type="datetime-local"
            value={start}
            onValue={setStart}
            error={form.errorOf("start")}
          />
          <TextField
            id={`${prefix}-end`}
            label="Until (excluded)"
            type="datetime-local"
            value={end}
            onValue={setEnd}
            error={form.errorOf("end")}
          />
        </div>
      )}
      {(kind === "SENDER_ALLOWLIST" || kind === "SENDER_BLOCKLIST") && (
        <Field
          id={`${prefix}-addresses`}
          label="Sender addresses"
          error={form.errorOf("addresses")}
          hint={
            kind === "SENDER_ALLOWLIST"
              ? "One per line. Only these smart accounts are sponsored."
              : "One per line. These smart accounts are never sponsored."
          }
        >
          {(described) => (
            <textarea
              {...described}
              name={`${prefix}-addresses`}
              rows={5}
              spellcheck={false}
              value={addresses}
              onInput={(event) => setAddresses((event.currentTarget as HTMLTextAreaElement).value)}
            />
          )}
        </Field>
      )}
      {kind === "MAX_GAS_PRICE" && (
        <div class="row">
          <TextField
            id={`${prefix}-max-fee`}
            label="Highest maxFeePerGas (gwei)"
            inputMode="decimal"
            value={maxFee}
            onValue={setMaxFee}
            error={form.errorOf("maxFee")}
            hint="Operations above it are not sponsored, so a fee spike cannot drain the deposit."
          />
          <TextField
            id={`${prefix}-max-priority-fee`}
            label="Highest maxPriorityFeePerGas (gwei, optional)"
            inputMode="decimal"
            value={maxPriorityFee}
            onValue={setMaxPriorityFee}
            error={form.errorOf("maxPriorityFee")}
          />
        </div>
      )}
      {kind === "RATE_LIMIT" && (
        <div class="row">
          <SelectField
            id={`${prefix}-quota-scope`}
            label="Counted per"
            value={quotaScope}
            onValue={setQuotaScope}
            options={[
              { value: "ip", label: "Client address" },
              { value: "sender", label: "Smart account (sender)" },
              { value: "origin", label: "Web origin" },
            ]}
            error={form.errorOf("quotaScope")}
          />
          <TextField
            id={`${prefix}-quota-limit`}
            label="Requests allowed"
            inputMode="numeric"
            value={quotaLimit}
            onValue={setQuotaLimit}
            error={form.errorOf("quotaLimit")}
          />
          <TextField
            id={`${prefix}-quota-window`}
            label="Per window of (seconds)"
            inputMode="numeric"
            value={quotaWindow}
            onValue={setQuotaWindow}
            error={form.errorOf("quotaWindow")}
            hint="Requests over the quota get HTTP 429 until the window ends."
          />
        </div>
      )}
      <FormError message={form.formError} />
      <button type="submit" disabled={form.busy}>
        {editing ? `Save ${editing.name}` : "Add rule"}
      </button>
    </form>
  );
}
