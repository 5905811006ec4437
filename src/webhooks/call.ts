import type { LookupAddress } from "node:dns";
import http, { type IncomingMessage } from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { checkUrl, defaultPort, type GuardPolicy, type Lookup } from "./addressGuard";
import type { WebhookRequest } from "./requests";
import { SIGNATURE_HEADER, signWebhook, TIMESTAMP_HEADER } from "./signature";

/** A webhook's answer is one small JSON object; anything longer is refused (and not read further). */
export const MAX_RESPONSE_BYTES = 16 * 1024;
export const DEFAULT_WEBHOOK_TIMEOUT_MS = 2_000;

interface CallBase {
  guard: GuardPolicy;
  /** For the whole call: DNS, connection, request, response headers and body. */
  timeoutMs: number;
  maxResponseBytes?: number;
  lookup?: Lookup;
  /** The service's clock (ms): the signature's timestamp. */
  nowMs: () => number;
  /** What a 2xx body means; absent: the webhook verdict (`arePoliciesVerified`). Alerts take any 2xx as delivered. */
  verdict?: (body: string) => CallResult;
}

/**
 * How a call is signed: with the account's webhook secret (the HMAC key of x-paymaster-signature), or with headers of
 * the caller's own made at the call's timestamp (unix seconds) over the signed text (the event endpoints' Standard
 * Webhooks signatures).
 */
export type CallOptions = CallBase &
  ({ secret: string } | { signedHeaders: (timestamp: number, signedText: string) => Record<string, string> });

/**
 * `ok` means the webhook answered `arePoliciesVerified: true`; anything else is a refusal with its reason. `status`:
 * the HTTP status of the answer, when one came.
 */
export type CallResult = { ok: true; status?: number } | { ok: false; reason: string; status?: number };

const refused = (reason: string): CallResult => ({ ok: false, reason });

/**
 * Calls one webhook and reads its verdict. Fails closed and never throws for anything the remote side does: a
 * timeout, a redirect (never followed), a non-2xx status, an oversized or invalid body, a missing field, an address
 * the guard refuses (checked after DNS resolution, and the connection goes to exactly the checked address, so a DNS
 * answer that changes between check and connect cannot point the call elsewhere).
 */
export async function callWebhook(request: WebhookRequest, options: CallOptions): Promise<CallResult> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), options.timeoutMs);
  const timedOut = refused(`timed out after ${options.timeoutMs} ms`);
  try {
    const url = new URL(request.url);
    if (url.protocol !== "http:" && url.protocol !== "https:") return refused("not an http or https URL");
    const checked = await checkUrl(url, options.guard, { lookup: options.lookup, signal: controller.signal });
    if (!checked.ok) return refused(checked.reason);
    return await send(url, checked.addresses, request, options, controller.signal);
  } catch (error) {
    if (controller.signal.aborted) return timedOut;
    return refused(`request failed (${(error as Error).message})`);
  } finally {
    clearTimeout(timer);
  }
}

/** Hands the connection the addresses the guard checked, whatever the DNS would answer now. */
function pinnedLookup(addresses: LookupAddress[]): LookupFunction {
  return (_hostname, options, callback) => {
    if (options.all) callback(null, addresses);
    else callback(null, (addresses[0] as LookupAddress).address, (addresses[0] as LookupAddress).family);
  };
}

function send(
  url: URL,
  addresses: LookupAddress[],
  request: WebhookRequest,
  options: CallOptions,
  signal: AbortSignal,
): Promise<CallResult> {
  const maxBytes = options.maxResponseBytes ?? MAX_RESPONSE_BYTES;
  const timestamp = Math.floor(options.nowMs() / 1000);
  const target = `${url.pathname}${url.search}`;
  const body = request.method === "POST" ? Buffer.from(request.body, "utf8") : undefined;
  const signedText = request.method === "POST" ? request.body : target;
  const headers: Record<string, string | number> = {
    accept: "application/json",
    "user-agent": "paymaster-service-webhook/1",
    ...("secret" in options
      ? { [TIMESTAMP_HEADER]: timestamp, [SIGNATURE_HEADER]: signWebhook(options.secret, timestamp, signedText) }
      : options.signedHeaders(timestamp, signedText)),
  };
  if (body) {
    headers["content-type"] = "application/json";
    headers["content-length"] = body.length;
  }

  return new Promise<CallResult>((resolve) => {
    let settled = false;
    const finish = (result: CallResult) => {
      if (settled) return;
      settled = true;
      // Frees the socket at once: no keep-alive, nothing more is read from a refused response.
      outgoing.destroy();
      resolve(result);
    };
    const transport = url.protocol === "https:" ? https : http;
    const outgoing = transport.request(
      {
        method: request.method,
        hostname: url.hostname.replace(/^\[(.*)\]$/, "$1"),
        port: defaultPort(url),
        path: target,
        headers,
        // Credentials in the URL (https://user:pass@host/) are sent as basic authentication.
        auth: url.username ? `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}` : undefined,
        agent: false,
        lookup: pinnedLookup(addresses),
        signal,
      },
      (response) => readVerdict(response, maxBytes, options.verdict ?? verdict, finish),
    );
    outgoing.on("error", (error) => {
      finish(signal.aborted ? refused(`timed out after ${options.timeoutMs} ms`) : refused(describeError(error)));
    });
    outgoing.end(body);
  });
}

function readVerdict(
  response: IncomingMessage,
  maxBytes: number,
  verdictOf: (body: string) => CallResult,
  settle: (result: CallResult) => void,
): void {
  const status = response.statusCode ?? 0;
  // Whatever the outcome, the status that came with it.
  const finish = (result: CallResult) => settle({ ...result, status });
  const tooLarge = refused(`response larger than ${maxBytes} bytes`);
  const early =
    status >= 300 && status < 400
      ? refused(`redirect not followed (status ${status})`)
      : status < 200 || status >= 300
        ? refused(`status ${status}`)
        : Number(response.headers["content-length"] ?? 0) > maxBytes
          ? tooLarge
          : undefined;
  if (early) {
    finish(early);
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  response.on("data", (chunk: Buffer) => {
    size += chunk.length;
    if (size > maxBytes) finish(tooLarge);
    else chunks.push(chunk);
  });
  response.on("end", () => finish(verdictOf(Buffer.concat(chunks).toString("utf8"))));
  response.on("error", (error) => finish(refused(describeError(error))));
  response.on("close", () => finish(refused("connection closed before the response ended")));
}

/** The body must be a JSON object with a boolean `arePoliciesVerified` (or the old spelling `arePoliciesVerifed`). */
function verdict(text: string): CallResult {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return refused("invalid JSON");
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    return refused("response is not a JSON object");
  }
  const fields = parsed as Record<string, unknown>;
  const answer =
    typeof fields.arePoliciesVerified === "boolean" ? fields.arePoliciesVerified : fields.arePoliciesVerifed;
  if (typeof answer !== "boolean") return refused("response has no boolean arePoliciesVerified");
  return answer ? { ok: true } : refused("arePoliciesVerified false");
}

function describeError(error: Error): string {
  const code = (error as NodeJS.ErrnoException).code;
  switch (code) {
    case "ECONNREFUSED":
      return "connection refused";
    case "ECONNRESET":
      return "connection reset";
    case "EHOSTUNREACH":
    case "ENETUNREACH":
      return "host unreachable";
  }
  if (code?.startsWith("HPE_")) return `invalid HTTP response (${code})`;
  if (code && /CERT|TLS|SSL/.test(code)) return `TLS failed (${code})`;
  return `request failed (${code ?? error.message})`;
}
