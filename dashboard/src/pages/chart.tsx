import type { StatsBucket } from "../api/ledger";
import { formatEther } from "../wei";

const WIDTH = 720;
const HEIGHT = 180;
/** `left` is the least room for the y-axis labels; a wider label gets a wider gutter (`gutterFor`). */
const PAD = { left: 48, right: 8, top: 12, bottom: 28 };
const FONT_SIZE = 11;
/** A generous width per character of a label: the widest common sans-serif digits are about 0.64 em. */
const CHAR_WIDTH = FONT_SIZE * 0.68;

/** The y-axis gutter: room for the widest label and the gap before the axis, so that none is cut off on the left. */
const gutterFor = (labels: readonly string[]) =>
  Math.max(PAD.left, Math.ceil(Math.max(...labels.map((label) => label.length)) * CHAR_WIDTH) + 8);

/** The bucket's start as a short label: hour of day, or day of month. */
const labelOf = (start: number, bucket: "hour" | "day") => {
  const date = new Date(start);
  return bucket === "hour"
    ? `${String(date.getHours()).padStart(2, "0")}:00`
    : `${date.getMonth() + 1}/${String(date.getDate()).padStart(2, "0")}`;
};

/** The fill patterns a series may be drawn with, told apart without colour. */
type PatternName = "hatch" | "dots";

/** One pattern's tile, under an id of the chart's own: two charts on a page each define theirs. */
function PatternDef({ id, name }: { id: string; name: PatternName }) {
  return name === "hatch" ? (
    <pattern id={id} width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">
      <rect width="6" height="6" fill="#fff" />
      <line x1="0" y1="0" x2="0" y2="6" stroke="#b42318" stroke-width="3" />
    </pattern>
  ) : (
    <pattern id={id} width="5" height="5" patternUnits="userSpaceOnUse">
      <rect width="5" height="5" fill="#fff" />
      <circle cx="2.5" cy="2.5" r="1.5" fill="#b45309" />
    </pattern>
  );
}

interface Series {
  key: string;
  label: string;
  /** How the series is told apart without colour: solid, or a fill pattern; the legend draws it the same way. */
  fill: { solid: string } | { pattern: PatternName };
  values: number[];
  format: (value: number) => string;
}

function BarChart(props: { id: string; title: string; series: Series[]; labels: string[] }) {
  const { id, title, labels, series } = props;
  // Ids are unique in the page, so each chart names its patterns after itself; its legend refers to them as well.
  const patternId = (name: PatternName) => `${id}-${name}`;
  const paint = ({ fill }: Series) => ("solid" in fill ? fill.solid : `url(#${patternId(fill.pattern)})`);
  const patterns = [...new Set(series.flatMap(({ fill }) => ("pattern" in fill ? [fill.pattern] : [])))];
  const max = Math.max(0, ...series.flatMap((s) => s.values));
  const first = series[0];
  // All zero: bars of height 0 on the usual scale.
  const scale = max > 0 ? max : 1;
  const yLabels = [first ? first.format(max) : "", "0"] as const;
  const left = gutterFor(yLabels);
  const plotWidth = WIDTH - left - PAD.right;
  const plotHeight = HEIGHT - PAD.top - PAD.bottom;
  const slot = plotWidth / Math.max(1, labels.length);
  const bar = Math.max(1, (slot * 0.8) / series.length);
  const every = Math.ceil(labels.length / 12);
  return (
    <figure class="chart">
      <figcaption>
        {title}
        <span class="legend">
          {series.map((s) => (
            <span key={s.key} class="legend-item">
              <svg width="14" height="14" aria-hidden="true">
                <rect width="14" height="14" fill={paint(s)} stroke="currentColor" />
              </svg>{" "}
              {s.label}
            </span>
          ))}
        </span>
      </figcaption>
      <svg
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        role="img"
        aria-label={`${title}: bar chart; the table below has the figures`}
      >
        {patterns.length > 0 && (
          <defs>
            {patterns.map((name) => (
              <PatternDef key={name} id={patternId(name)} name={name} />
            ))}
          </defs>
        )}
        <line x1={left} y1={PAD.top + plotHeight} x2={WIDTH - PAD.right} y2={PAD.top + plotHeight} stroke="#555" />
        <text x={left - 4} y={PAD.top + 8} text-anchor="end" font-size={FONT_SIZE}>
          {yLabels[0]}
        </text>
        <text x={left - 4} y={PAD.top + plotHeight} text-anchor="end" font-size={FONT_SIZE}>
          {yLabels[1]}
        </text>
        {labels.map((label, i) => (
          <g key={label + String(i)}>
            {series.map((s, j) => {
              const value = s.values[i] ?? 0;
              const height = (value / scale) * plotHeight;
              return (
                <rect
                  key={s.key}
                  x={left + i * slot + slot * 0.1 + j * bar}
                  y={PAD.top + plotHeight - height}
                  width={bar}
                  height={height}
                  fill={paint(s)}
                  stroke={value > 0 ? "#222" : "none"}
                  stroke-width="0.5"
                >
                  <title>{`${label} ${s.label}: ${s.format(value)}`}</title>
                </rect>
              );
            })}
            {i % every === 0 && (
              <text x={left + i * slot + slot / 2} y={HEIGHT - 8} text-anchor="middle" font-size={FONT_SIZE}>
                {label}
              </text>
            )}
          </g>
        ))}
      </svg>
    </figure>
  );
}

/** Sponsorships and spend per bucket: two charts told apart by pattern and legend, and the same figures as a table. */
export function StatsChart({ buckets, bucket }: { buckets: StatsBucket[]; bucket: "hour" | "day" }) {
  const labels = buckets.map((b) => labelOf(b.start, bucket));
  const sponsored = buckets.map((b) => b.counts.pending + b.counts.mined + b.counts.expired);
  const refused = buckets.map((b) => b.counts.refused);
  const spend = buckets.map((b) => Number(formatEther(b.spendWei)));
  const held = buckets.map((b) => Number(formatEther(b.heldWei)));
  // Four significant digits without trailing zeros: 0.000636, not 0.0006360.
  const ether = (value: number) => String(Number(value.toPrecision(4)));
  const count = (value: number) => String(Math.round(value));
  return (
    <div class="charts">
      <BarChart
        id="count"
        title={`Sponsorships per ${bucket}`}
        labels={labels}
        series={[
          {
            key: "sponsored",
            label: "Sponsored (solid)",
            fill: { solid: "#1d4ed8" },
            values: sponsored,
            format: count,
          },
          { key: "refused", label: "Refused (hatched)", fill: { pattern: "hatch" }, values: refused, format: count },
        ]}
      />
      <BarChart
        id="spend"
        title={`Spend per ${bucket} (ETH)`}
        labels={labels}
        series={[
          {
            key: "spend",
            label: "Spent by mined operations (solid)",
            fill: { solid: "#047857" },
            values: spend,
            format: ether,
          },
          {
            key: "held",
            label: "Held by pending ones (dotted)",
            fill: { pattern: "dots" },
            values: held,
            format: ether,
          },
        ]}
      />
      <details>
        <summary>The figures as a table</summary>
        <div class="table-scroll">
          <table>
            <thead>
              <tr>
                <th scope="col">{bucket === "hour" ? "Hour" : "Day"}</th>
                <th scope="col">Sponsored</th>
                <th scope="col">Refused</th>
                <th scope="col">Spent (ETH)</th>
                <th scope="col">Held by pending (ETH)</th>
              </tr>
            </thead>
            <tbody>
              {buckets.map((b, i) => (
                <tr key={b.start}>
                  <th scope="row">{new Date(b.start).toLocaleString()}</th>
                  <td>{sponsored[i]}</td>
                  <td>{refused[i]}</td>
                  <td>{formatEther(b.spendWei)}</td>
                  <td>{formatEther(b.heldWei)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </div>
  );
}
