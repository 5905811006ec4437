// One JSON-RPC request over real HTTP, for tests that talk to a listening server (the service on its port, Alto, a
// node) rather than through app.inject: the frame is built and the answer parsed here, once, instead of in each test.
export interface JsonRpcReply<Result> {
  id?: number | string | null;
  result?: Result;
  error?: { code: number; message: string; data?: unknown };
}

/** Posts `method` with `params` to `url` and returns the HTTP status and the parsed reply, whatever they are. */
export async function postJsonRpc<Result = unknown>(
  url: string,
  method: string,
  params: unknown[],
  id = 1,
): Promise<{ status: number; body: JsonRpcReply<Result> }> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id, method, params }),
  });
  return { status: response.status, body: (await response.json()) as JsonRpcReply<Result> };
}
