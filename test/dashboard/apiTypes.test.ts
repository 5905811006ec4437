// The dashboard's client is typed from the service's own /openapi.json (npm run dashboard:api): the committed types
// must be what the service describes today, or a route or field the dashboard uses may have changed under it.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { DASHBOARD_API_TYPES, dashboardApiTypes } from "../../scripts/dashboardApi";

test("dashboard/src/api/schema.d.ts is current with /openapi.json (else run npm run dashboard:api)", async () => {
  assert.equal(readFileSync(DASHBOARD_API_TYPES, "utf8"), await dashboardApiTypes());
});
