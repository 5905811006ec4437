/** One request to a webhook, before signing: the URL to call and, for a POST, the exact JSON body. */
export type WebhookRequest = { method: "GET"; url: string } | { method: "POST"; url: string; body: string };

type WebhookData = Record<string, unknown> | undefined;

/**
 * A registered webhook (docs/management-api.md, 'How the service calls webhooks'). POST: `{"data": webhookData}`. GET:
 * each field of `webhookData` as a query parameter added to the registered URL's own, strings as they are and anything
 * else JSON-encoded (`5`, `true`, `{"a":1}`). Without webhookData the POST sends `{"data":{}}` and the GET adds
 * nothing.
 */
export function registeredWebhookRequest(url: string, requestType: "GET" | "POST", data: WebhookData): WebhookRequest {
  if (requestType === "POST") return { method: "POST", url, body: JSON.stringify({ data: data ?? {} }) };
  // A URL that does not parse goes to the call as it is, which refuses it (fail closed) like a POST one.
  if (!URL.canParse(url)) return { method: "GET", url };
  const target = new URL(url);
  for (const [key, value] of Object.entries(data ?? {})) {
    if (value === undefined) continue;
    target.searchParams.append(key, typeof value === "string" ? value : JSON.stringify(value));
  }
  return { method: "GET", url: target.toString() };
}

/** A `WEBHOOK` rule: POST `{"data": webhookData, "userOp": <the operation, numbers as decimal strings>}`. */
export function webhookRuleRequest(
  url: string,
  data: WebhookData,
  userOp: Record<string, string | Record<string, string>>,
): WebhookRequest {
  return { method: "POST", url, body: JSON.stringify({ data: data ?? {}, userOp }) };
}
