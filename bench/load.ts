import autocannon from "autocannon";

export interface LoadResult {
  requestsPerSecond: number;
  /** Responses received in the timed run. */
  requests: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  errors: number;
}

/**
 * Drives one URL with POST bodies from this process, as a separate load generator. `body(n)` makes the n-th body, so
 * that requests can differ (a new nonce each), as a wallet's do.
 */
export async function load(
  url: string,
  body: (n: number) => string,
  options: { connections: number; seconds: number },
): Promise<LoadResult> {
  let sent = 0;
  const result = await autocannon({
    url,
    method: "POST",
    headers: { "content-type": "application/json" },
    body: body(sent++),
    connections: options.connections,
    duration: options.seconds,
    requests: [{ setupRequest: (request) => ({ ...request, body: body(sent++) }) }],
  });
  return {
    requestsPerSecond: Math.round(result.requests.average),
    requests: result.requests.total,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}
