import Type from "typebox";
import { badRequest } from "../../errors";
import { withProblem } from "./common";

/** An instant as ISO 8601 text with its offset (what the audit log and token expiries show). */
const ISO_TIME_PATTERN = "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|[+-]\\d{2}:\\d{2})$";
const ISO_TIME_PROBLEM = "must be an ISO 8601 time with its offset, like 2026-12-31T23:59:59Z";

/** The shape only: whether the instant exists is isoTimeMs's to say, where the value is read. */
export const IsoTime = (description: string) =>
  withProblem(
    Type.String({ pattern: ISO_TIME_PATTERN, description, examples: ["2026-12-31T23:59:59Z"] }),
    ISO_TIME_PROBLEM,
  );

const ISO_TIME_PARTS = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|([+-]\d{2}):(\d{2}))$/;

const isLeapYear = (year: number) => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** What in a well-shaped time does not exist on the calendar or the clock, if anything. */
function missingPart(parts: string[]): string | undefined {
  const [year = "", month = "", day = "", hour = "", minute = "", second = "00", offsetHours, offsetMinutes] = parts;
  const monthNumber = Number(month);
  if (monthNumber < 1 || monthNumber > 12) return `month ${month} does not exist (01 to 12)`;
  const days = (DAYS_IN_MONTH[monthNumber - 1] ?? 0) + (monthNumber === 2 && isLeapYear(Number(year)) ? 1 : 0);
  if (Number(day) < 1) return `day ${day} does not exist`;
  if (Number(day) > days) return `${year}-${month} has ${days} days`;
  if (Number(hour) > 23) return `hour ${hour} does not exist (00 to 23)`;
  if (Number(minute) > 59) return `minute ${minute} does not exist (00 to 59)`;
  if (Number(second) > 59) return `second ${second} does not exist (00 to 59)`;
  if (offsetHours !== undefined && (Math.abs(Number(offsetHours)) > 23 || Number(offsetMinutes) > 59)) {
    return `offset ${offsetHours}:${offsetMinutes} does not exist (hours 00 to 23, minutes 00 to 59)`;
  }
  return undefined;
}

/**
 * The instant a client's ISO 8601 time names, in ms since the epoch; a 400 naming `field` when it is not one. Every
 * time read from a client goes through here, because Date.parse alone rolls an impossible date over (2030-02-30 reads
 * as 2030-03-02) and refuses others (month 13) in words of its own. The schema's pattern checks the shape before a
 * route's handler; the account command reaches the use cases without it, so the shape is checked here too.
 */
export function isoTimeMs(field: string, text: string): number {
  const match = ISO_TIME_PARTS.exec(text);
  if (!match) throw badRequest(`${field} ${ISO_TIME_PROBLEM}`);
  const missing = missingPart(match.slice(1));
  if (missing) throw badRequest(`${field} must be a time that exists: ${missing}`);
  return Date.parse(text);
}
