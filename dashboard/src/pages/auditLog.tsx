import { useState } from "preact/hooks";
import { type AuditEntry, type AuditFilters, auditPage } from "../api/auditLog";
import { listPaymasters, useLoad } from "../api/paymasters";
import { FilterButton, LoadError, PageNav, TimeRangeFields, usePageCursors } from "../ui/filters";
import { SelectField, useSubmit } from "../ui/forms";

/** An instant typed in the page's local time, as the ISO 8601 text the API takes. */
const isoOf = (local: string) => (local ? new Date(local).toISOString() : undefined);

/** A value of a change as one line; objects (a rule's settings) as their JSON. */
const shown = (value: unknown) =>
  value === undefined ? "–" : typeof value === "string" ? value : JSON.stringify(value);

/** What one change did: each field before → after (an insert or a delete shows one side). */
function ChangeLines({ change }: { change: AuditEntry["changes"][number] }) {
  const before = (change.before ?? {}) as Record<string, unknown>;
  const after = (change.after ?? {}) as Record<string, unknown>;
  const fields = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((field) => field !== "id");
  return (
    <li>
      <strong>
        {change.table} {change.operation}
      </strong>
      <ul>
        {fields.map((field) => (
          <li key={field}>
            <code>{field}</code>:{" "}
            {change.operation === "update"
              ? `${shown(before[field])} → ${shown(after[field])}`
              : shown(change.operation === "delete" ? before[field] : after[field])}
          </li>
        ))}
      </ul>
    </li>
  );
}

/** The account's audit log: who changed what and when, newest first, by paymaster and time. */
export function AuditLogPage() {
  const paymasters = useLoad(listPaymasters);
  const [paymasterId, setPaymasterId] = useState("");
  const [from, setFrom] = useState("");
  const [to, setTo] = useState("");
  const [applied, setApplied] = useState<AuditFilters>({});
  const pages = usePageCursors();
  const form = useSubmit({ paymasterId: [], from: [], to: [] });
  const page = useLoad(() => auditPage(applied, pages.cursor), [applied, pages.cursor]);
  const nameOf = (id: string | null) =>
    id === null ? "–" : (paymasters.value?.find((p) => p.paymasterId === id)?.name ?? id);
  const filter = (event: Event) => {
    event.preventDefault();
    void form.run(async () => {
      const filters = { paymasterId: paymasterId || undefined, from: isoOf(from), to: isoOf(to) };
      await auditPage(filters, undefined);
      setApplied(filters);
      pages.restart();
    });
  };
  return (
    <section aria-labelledby="audit">
      <h1 id="audit">Audit log</h1>
      <p>Every change made through the management API, with the token that made it. Keys and tokens show as ***.</p>
      <form onSubmit={filter} noValidate class="filters">
        <SelectField
          id="audit-paymaster"
          label="Paymaster"
          value={paymasterId}
          onValue={setPaymasterId}
          options={[
            { value: "", label: "any" },
            ...(paymasters.value ?? []).map((p) => ({ value: p.paymasterId, label: p.name })),
          ]}
          error={form.errorOf("paymasterId")}
        />
        <TimeRangeFields idPrefix="audit" from={from} to={to} onFrom={setFrom} onTo={setTo} form={form} />
        <FilterButton form={form} />
      </form>
      <LoadError error={page.error} />
      {page.value && page.value.entries.length === 0 && <p>No change matches.</p>}
      {page.value && page.value.entries.length > 0 && (
        <div class="table-scroll">
          <table class="audit">
            <caption class="visually-hidden">Management writes, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Token</th>
                <th scope="col">From</th>
                <th scope="col">Request</th>
                <th scope="col">Paymaster</th>
                <th scope="col">Changes</th>
              </tr>
            </thead>
            <tbody>
              {page.value.entries.map((entry) => (
                <tr key={entry.id}>
                  <td>{new Date(entry.time).toLocaleString()}</td>
                  <td>{entry.tokenName ?? "–"}</td>
                  <td>
                    <code>{entry.clientAddress}</code>
                  </td>
                  <td>
                    <code>
                      {entry.method} {entry.path.replace("/api/v2/public/sdk", "")}
                    </code>
                  </td>
                  <td>{nameOf(entry.paymasterId)}</td>
                  <td>
                    {entry.changes.length === 0 ? (
                      "no record changed"
                    ) : (
                      <ul class="changes">
                        {entry.changes.map((change, i) => (
                          <ChangeLines key={`${entry.id}-${i}`} change={change} />
                        ))}
                      </ul>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <PageNav label="Audit log pages" pages={pages} nextCursor={page.value?.nextCursor} reload={page.reload} />
    </section>
  );
}
