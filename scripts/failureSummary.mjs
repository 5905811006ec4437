// A test reporter that stays silent until the run ends, then lists every failed test with its file and error.
// CI keeps only the tail of a run's output, and the default TAP report names a failure where it happened, thousands of
// lines up; this list puts the names at the end, where they are read. Plain JavaScript: node loads reporters before
// tsx's hooks are in place.

/** @param {AsyncIterable<{type: string, data: any}>} source */
export default async function* failureSummary(source) {
  const failures = [];
  for await (const event of source) {
    if (event.type !== "test:fail") continue;
    const { name, file, details } = event.data;
    const error = details?.error;
    // A suite fails when one of its tests does; its own line adds nothing to the test's.
    if (error?.failureType === "subtestsFailed") continue;
    const cause = error?.cause ?? error;
    const message = String(cause?.message ?? cause)
      .split("\n")
      .slice(0, 6)
      .join("\n#     ");
    failures.push(`# ✖ ${file ?? "(unknown file)"} › ${name}\n#     ${message}\n`);
  }
  if (failures.length === 0) return;
  yield `\n# ${failures.length} failed:\n`;
  yield* failures;
}
