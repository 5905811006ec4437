// Which Node.js lines the service is supported on: the maintained ones. Node 20 reached its end of life on
// 2026-04-30; the service still runs on 20.19 (every dependency accepts it) for machines that have nothing newer, and
// says so at start.
export const SUPPORTED_NODE_LINES = [22, 24, 26] as const;

/** A warning for the start's log when the running Node line is not one of the supported ones; undefined otherwise. */
export function runtimeWarning(version: string = process.versions.node): string | undefined {
  const major = Number(version.split(".")[0]);
  if (major >= SUPPORTED_NODE_LINES[0]) return undefined;
  return (
    `Node ${version} is past its end of life: the service runs on it, but is supported on Node ` +
    `${SUPPORTED_NODE_LINES.join(", ")} (26 is the Active LTS line); move to one of them`
  );
}
