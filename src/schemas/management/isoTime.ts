import Type from "typebox";
import { withProblem } from "./common";

/** An instant as ISO 8601 text with its offset (what the audit log and token expiries show). */
const ISO_TIME_PATTERN = "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|[+-]\\d{2}:\\d{2})$";

export const IsoTime = (description: string) =>
  withProblem(
    Type.String({ pattern: ISO_TIME_PATTERN, description, examples: ["2026-12-31T23:59:59Z"] }),
    "must be an ISO 8601 time with its offset, like 2026-12-31T23:59:59Z",
  );
