import assert from "node:assert/strict";
import { test } from "node:test";
import { runtimeWarning, SUPPORTED_NODE_LINES } from "../src/runtimeSupport";

test("Node 22, 24 and 26 are supported; 20 runs with a warning that names the supported lines", () => {
  assert.deepEqual(SUPPORTED_NODE_LINES, [22, 24, 26]);
  for (const version of ["22.12.0", "24.1.0", "26.12.1", "27.0.0"]) assert.equal(runtimeWarning(version), undefined);
  assert.equal(
    runtimeWarning("20.19.5"),
    "Node 20.19.5 is past its end of life: the service runs on it, but is supported on Node 22, 24, 26 (26 is the " +
      "Active LTS line); move to one of them",
  );
});
