/** Logger options for `buildApp` that keep every JSON log line in memory, for tests that read what was logged. */
export function captureLog(level = "info") {
  const lines: string[] = [];
  return {
    logger: { level, stream: { write: (line: string) => void lines.push(line) } },
    text: () => lines.join(""),
    entries: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}
