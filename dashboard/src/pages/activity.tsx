import { useState } from "preact/hooks";
import { type LedgerFilters, ledgerPage, ledgerStats } from "../api/ledger";
import { type PaymasterView, useLoad } from "../api/paymasters";
import { FilterButton, LoadError, PageNav, TimeRangeFields, usePageCursors } from "../ui/filters";
import { SelectField, TextField, useSubmit } from "../ui/forms";
import { formatEther, shortHex, tokenCost } from "../wei";
import { StatsChart } from "./chart";

const HOUR = 3_600_000;
const RANGES = { hour: 24 * HOUR, day: 30 * 24 * HOUR } as const;

/** The sponsorship ledger with its filters and pages, and sponsorships and spend per hour or day. */
export function ActivityTab({ paymaster }: { paymaster: PaymasterView }) {
  return (
    <>
      <Stats apiKey={paymaster.apiKey} />
      <Ledger apiKey={paymaster.apiKey} />
    </>
  );
}

function Stats({ apiKey }: { apiKey: string }) {
  const [bucket, setBucket] = useState<"hour" | "day">("hour");
  const stats = useLoad(() => {
    // The range ends at the end of the current bucket, so the newest operations are in the last bar.
    const size = bucket === "hour" ? HOUR : 24 * HOUR;
    const to = Math.ceil((Date.now() + 1) / size) * size;
    return ledgerStats(apiKey, bucket, to - RANGES[bucket], to);
  }, [apiKey, bucket]);
  return (
    <section aria-labelledby="stats">
      <h2 id="stats">Sponsorships and spend</h2>
      <div class="row">
        <SelectField
          id="stats-bucket"
          label="Per"
          value={bucket}
          onValue={(value) => setBucket(value as "hour" | "day")}
          options={[
            { value: "hour", label: "hour (last 24 hours)" },
            { value: "day", label: "day (last 30 days)" },
          ]}
        />
        <button type="button" class="secondary" onClick={stats.reload}>
          Refresh chart
        </button>
      </div>
      {stats.error && (
        <p class="error" role="alert">
          {stats.error}
        </p>
      )}
      {stats.value && <StatsChart buckets={stats.value} bucket={bucket} />}
    </section>
  );
}

const msOf = (local: string) => (local ? String(new Date(local).getTime()) : undefined);

function Ledger({ apiKey }: { apiKey: string }) {
  const [status, setStatus] = useState("");
  const [sender, setSender] = useState("");
  const [from, setFrom] = useState("");
  const [to, setTo] = useState("");
  const [applied, setApplied] = useState<LedgerFilters>({});
  const pages = usePageCursors();
  const form = useSubmit({ status: [], sender: [], from: [], to: [] });
  const page = useLoad(() => ledgerPage(apiKey, applied, pages.cursor), [apiKey, applied, pages.cursor]);
  const filter = (event: Event) => {
    event.preventDefault();
    void form.run(async () => {
      const filters = {
        status: status || undefined,
        sender: sender.trim() || undefined,
        from: msOf(from),
        to: msOf(to),
      };
      // Checked here so that a refusal lands beside its field; the table then reads with these filters.
      await ledgerPage(apiKey, filters, undefined);
      setApplied(filters);
      pages.restart();
    });
  };
  return (
    <section aria-labelledby="ledger">
      <h2 id="ledger">Ledger</h2>
      <form onSubmit={filter} noValidate class="filters">
        <SelectField
          id="ledger-status"
          label="Status"
          value={status}
          onValue={setStatus}
          options={[
            { value: "", label: "any" },
            { value: "pending", label: "pending" },
            { value: "mined", label: "mined" },
            { value: "expired", label: "expired" },
            { value: "refused", label: "refused" },
          ]}
          error={form.errorOf("status")}
        />
        <TextField
          id="ledger-sender"
          label="Sender"
          value={sender}
          onValue={setSender}
          placeholder="0x…"
          spellcheck={false}
          error={form.errorOf("sender")}
        />
        <TimeRangeFields idPrefix="ledger" from={from} to={to} onFrom={setFrom} onTo={setTo} form={form} />
        <FilterButton form={form} />
      </form>
      <LoadError error={page.error} />
      {page.value && page.value.rows.length === 0 && <p>No sponsorship matches.</p>}
      {page.value && page.value.rows.length > 0 && (
        <div class="table-scroll">
          <table class="ledger">
            <caption class="visually-hidden">Sponsorship requests, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Status</th>
                <th scope="col">Sender</th>
                <th scope="col">Cost (ETH)</th>
                <th scope="col">Token paid</th>
                <th scope="col">Transaction</th>
                <th scope="col">Reason</th>
              </tr>
            </thead>
            <tbody>
              {page.value.rows.map((row) => (
                <tr key={`${row.createdAt}-${row.sender}-${row.nonce}-${row.userOpHash}`}>
                  <td>{new Date(row.createdAt).toLocaleString()}</td>
                  <td>
                    <span class={`status ${row.status}`}>{row.status}</span>
                  </td>
                  <td>
                    <code title={row.sender}>{shortHex(row.sender)}</code>
                  </td>
                  <td>
                    {row.actualWei !== null
                      ? formatEther(row.actualWei)
                      : row.worstCaseWei !== null
                        ? `at most ${formatEther(row.worstCaseWei)}`
                        : "–"}
                  </td>
                  <td>{row.token ? tokenCost(row.token) : ""}</td>
                  <td>
                    <code title={row.transactionHash ?? undefined}>{shortHex(row.transactionHash)}</code>
                  </td>
                  <td>{row.reason ?? ""}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <PageNav label="Ledger pages" pages={pages} nextCursor={page.value?.nextCursor} reload={page.reload} />
    </section>
  );
}
