// Spending-limit cycles that follow the UTC calendar (week: Monday 00:00 UTC, ISO; month: the 1st at 00:00 UTC) and
// the minute cycles that run back to back from the anchor: boundaries at month ends, leap years, year ends and the
// week start, the first cycle cut at the anchor, and cycles of several weeks or months counted from the anchor's.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { type CycleDuration, currentCycle, weekStartMs } from "../../src/sponsorship/spendingLimit";

const utc = (y: number, m: number, d: number, h = 0, min = 0, s = 0, ms = 0) => Date.UTC(y, m - 1, d, h, min, s, ms);
const iso = (ms: number) => new Date(ms).toISOString();

describe("weekStartMs: Monday 00:00 UTC of the ISO week", () => {
  const cases: [string, number, number][] = [
    ["a Monday at midnight is its own week start", utc(2026, 1, 5), utc(2026, 1, 5)],
    ["a Monday one ms after midnight", utc(2026, 1, 5, 0, 0, 0, 1), utc(2026, 1, 5)],
    ["a Sunday one ms before midnight belongs to the week before", utc(2026, 1, 11, 23, 59, 59, 999), utc(2026, 1, 5)],
    ["a Thursday", utc(2026, 1, 8, 13), utc(2026, 1, 5)],
    [
      "across a year end: Thursday 1 January 2026 is in the week of Monday 29 December 2025",
      utc(2026, 1, 1, 8),
      utc(2025, 12, 29),
    ],
    [
      "across a leap day: Sunday 1 March 2026 is in the week of Monday 23 February",
      utc(2026, 3, 1, 12),
      utc(2026, 2, 23),
    ],
    ["leap year 2028: Tuesday 29 February is in the week of Monday 28 February", utc(2028, 2, 29, 5), utc(2028, 2, 28)],
  ];
  for (const [name, at, expected] of cases) test(name, () => assert.equal(iso(weekStartMs(at)), iso(expected)));
});

type Case = { name: string; anchor: number; cycle: CycleDuration; now: number; start: number; end: number };

function check(cases: Case[]) {
  for (const c of cases) {
    test(c.name, () => {
      const { startMs, endMs } = currentCycle(c.anchor, c.cycle, c.now);
      assert.deepEqual([iso(startMs), iso(endMs)], [iso(c.start), iso(c.end)]);
    });
  }
}

const WEEK: CycleDuration = { value: 1, unit: "week" };
const MONTH: CycleDuration = { value: 1, unit: "month" };
/** Wednesday 14 January 2026, 10:30 UTC. */
const WEDNESDAY = utc(2026, 1, 14, 10, 30);

describe("week cycles", () => {
  check([
    {
      name: "the first cycle starts at the anchor and ends on the next Monday",
      anchor: WEDNESDAY,
      cycle: WEEK,
      now: WEDNESDAY + 1,
      start: WEDNESDAY,
      end: utc(2026, 1, 19),
    },
    {
      name: "one ms before the next Monday: still the first cycle",
      anchor: WEDNESDAY,
      cycle: WEEK,
      now: utc(2026, 1, 19) - 1,
      start: WEDNESDAY,
      end: utc(2026, 1, 19),
    },
    {
      name: "exactly Monday 00:00 UTC: a new cycle of a whole week",
      anchor: WEDNESDAY,
      cycle: WEEK,
      now: utc(2026, 1, 19),
      start: utc(2026, 1, 19),
      end: utc(2026, 1, 26),
    },
    {
      name: "across the year end",
      anchor: WEDNESDAY,
      cycle: WEEK,
      now: utc(2027, 1, 1, 12),
      start: utc(2026, 12, 28),
      end: utc(2027, 1, 4),
    },
    {
      name: "an anchor on a Monday at midnight: whole weeks from the start",
      anchor: utc(2026, 1, 12),
      cycle: WEEK,
      now: utc(2026, 1, 12, 1),
      start: utc(2026, 1, 12),
      end: utc(2026, 1, 19),
    },
    {
      name: "2-week cycles count from the anchor's week: the second cycle starts two Mondays later",
      anchor: WEDNESDAY,
      cycle: { value: 2, unit: "week" },
      now: utc(2026, 1, 20),
      start: WEDNESDAY,
      end: utc(2026, 1, 26),
    },
    {
      name: "2-week cycles: the next one",
      anchor: WEDNESDAY,
      cycle: { value: 2, unit: "week" },
      now: utc(2026, 1, 27),
      start: utc(2026, 1, 26),
      end: utc(2026, 2, 9),
    },
    {
      name: "an instant before the anchor belongs to the first cycle",
      anchor: WEDNESDAY,
      cycle: WEEK,
      now: WEDNESDAY - 86_400_000,
      start: WEDNESDAY,
      end: utc(2026, 1, 19),
    },
  ]);
});

describe("month cycles (calendar months in UTC)", () => {
  check([
    {
      name: "the first cycle starts at the anchor and ends on the 1st",
      anchor: WEDNESDAY,
      cycle: MONTH,
      now: WEDNESDAY + 1,
      start: WEDNESDAY,
      end: utc(2026, 2, 1),
    },
    {
      name: "31 January 23:59:59.999: still January",
      anchor: WEDNESDAY,
      cycle: MONTH,
      now: utc(2026, 1, 31, 23, 59, 59, 999),
      start: WEDNESDAY,
      end: utc(2026, 2, 1),
    },
    {
      name: "February of a common year: 28 days",
      anchor: WEDNESDAY,
      cycle: MONTH,
      now: utc(2026, 2, 28, 23, 59, 59, 999),
      start: utc(2026, 2, 1),
      end: utc(2026, 3, 1),
    },
    {
      name: "February of a leap year: the 29th is still February",
      anchor: WEDNESDAY,
      cycle: MONTH,
      now: utc(2028, 2, 29, 12),
      start: utc(2028, 2, 1),
      end: utc(2028, 3, 1),
    },
    {
      name: "a 30-day month",
      anchor: WEDNESDAY,
      cycle: MONTH,
      now: utc(2026, 4, 30, 23),
      start: utc(2026, 4, 1),
      end: utc(2026, 5, 1),
    },
    {
      name: "December runs into the next year",
      anchor: WEDNESDAY,
      cycle: MONTH,
      now: utc(2026, 12, 31, 23, 59),
      start: utc(2026, 12, 1),
      end: utc(2027, 1, 1),
    },
    {
      name: "1 January 00:00 UTC starts a new cycle",
      anchor: WEDNESDAY,
      cycle: MONTH,
      now: utc(2027, 1, 1),
      start: utc(2027, 1, 1),
      end: utc(2027, 2, 1),
    },
    {
      name: "3-month cycles count from the anchor's month: January, April, July…",
      anchor: WEDNESDAY,
      cycle: { value: 3, unit: "month" },
      now: utc(2026, 6, 30, 12),
      start: utc(2026, 4, 1),
      end: utc(2026, 7, 1),
    },
    {
      name: "12-month cycles from an anchor in November: each runs November to November",
      anchor: utc(2025, 11, 20, 8),
      cycle: { value: 12, unit: "month" },
      now: utc(2027, 3, 3),
      start: utc(2026, 11, 1),
      end: utc(2027, 11, 1),
    },
    {
      name: "an anchor on the 1st at midnight: whole months from the start",
      anchor: utc(2026, 3, 1),
      cycle: MONTH,
      now: utc(2026, 3, 15),
      start: utc(2026, 3, 1),
      end: utc(2026, 4, 1),
    },
  ]);
});

describe("minute cycles run back to back from the anchor, like hour and day", () => {
  const anchor = utc(2026, 1, 14, 10, 30, 12, 345);
  check([
    {
      name: "the first minute",
      anchor,
      cycle: { value: 1, unit: "minute" },
      now: anchor + 59_999,
      start: anchor,
      end: anchor + 60_000,
    },
    {
      name: "the second minute starts 60 s after the anchor, not on the clock's minute",
      anchor,
      cycle: { value: 1, unit: "minute" },
      now: anchor + 60_000,
      start: anchor + 60_000,
      end: anchor + 120_000,
    },
    {
      name: "15-minute cycles, an hour and a second later",
      anchor,
      cycle: { value: 15, unit: "minute" },
      now: anchor + 3_601_000,
      start: anchor + 3_600_000,
      end: anchor + 4_500_000,
    },
  ]);
});
