// The demos' JSON-RPC call to the service's endpoint for one chain and API key: the result, or an error naming the
// method (and `what`, the demo's mode) with the service's error as it came.

/** How long a demo waits for one answer of the service. */
export const REQUEST_TIMEOUT_MS = 30_000;

export interface DemoEndpoint {
  baseUrl: string;
  chainId: number;
  apiKey: string;
}

export async function demoRpc<T>(endpoint: DemoEndpoint, method: string, params: unknown[], what = ""): Promise<T> {
  const reply = await fetch(`${endpoint.baseUrl}/api/v1/${endpoint.chainId}/${endpoint.apiKey}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const body = (await reply.json()) as { result?: T; error?: { code: number; message: string } };
  if (!body.result) throw new Error(`${method}${what} failed: ${JSON.stringify(body.error ?? body)}`);
  return body.result;
}
