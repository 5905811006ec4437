import type { IncomingHttpHeaders } from "node:http";
import { Webhook } from "standardwebhooks";
import { eventually } from "../helpers/eventually";
import { startWebhookServer, type WebhookServer } from "../helpers/webhookServer";

/** One event as the receiver read it. */
export interface ReceivedEvent {
  id: string;
  type: string;
  sequence: number;
  timestamp: string;
  data: Record<string, unknown>;
  headers: IncomingHttpHeaders;
  body: string;
  /** The status the receiver answered. */
  status: number;
  /** Which of the secrets it knew verified the delivery (by position), through the standardwebhooks package. */
  verifiedBy: number[];
}

export interface EventReceiver {
  server: WebhookServer;
  /** Where the service posts: the receiver's /events. */
  url: string;
  /** Every delivery that reached it, in arrival order, whatever it answered. */
  received: ReceivedEvent[];
  /** The deliveries it answered 2xx. */
  accepted(): ReceivedEvent[];
  /** The secrets it verifies with (the endpoint's, as creation or rotation answered them). */
  secrets: string[];
  /** What it answers: a 2xx accepts; anything else fails the attempt. */
  status: number;
  /** How long it takes to answer (ms), to keep deliveries on the wire for a while. */
  delayMs: number;
  /** Waits until `count` deliveries have been accepted, and returns them. */
  acceptedAtLeast(count: number, withinMs?: number): Promise<ReceivedEvent[]>;
  close(): Promise<void>;
}

/**
 * A real HTTP receiver of the test's own that checks every delivery as a dApp would, with the standardwebhooks npm
 * package. `clock`: the time the package compares webhook-timestamp with (the service's clock, when a test moves it).
 */
export async function startEventReceiver(clock: () => number = Date.now): Promise<EventReceiver> {
  const server = await startWebhookServer();
  const receiver: EventReceiver = {
    server,
    url: server.url("/events"),
    received: [],
    accepted: () => receiver.received.filter((event) => event.status >= 200 && event.status < 300),
    secrets: [],
    status: 204,
    delayMs: 0,
    acceptedAtLeast: (count, withinMs = 20_000) =>
      eventually(
        `${count} events accepted`,
        () => receiver.accepted(),
        (accepted) => accepted.length >= count,
        { withinMs },
      ),
    close: () => server.close(),
  };
  server.on("/events", (request, response) => {
    const call = server.callsTo("/events").at(-1);
    if (!call) throw new Error("the call was not recorded");
    const parsed = JSON.parse(call.body) as Omit<ReceivedEvent, "headers" | "body" | "status" | "verifiedBy">;
    const status = receiver.status;
    receiver.received.push({
      ...parsed,
      headers: call.headers,
      body: call.body,
      status,
      verifiedBy: receiver.secrets.flatMap((secret, index) => (verifies(secret, call, clock()) ? [index] : [])),
    });
    const answer = () => {
      response.writeHead(status);
      response.end();
    };
    if (receiver.delayMs > 0) setTimeout(answer, receiver.delayMs);
    else answer();
    void request;
  });
  return receiver;
}

/** Whether the package accepts the delivery under `secret`, its clock set to `nowMs` for the timestamp's check. */
function verifies(secret: string, call: { body: string; headers: IncomingHttpHeaders }, nowMs: number): boolean {
  const realNow = Date.now;
  Date.now = () => nowMs;
  try {
    new Webhook(secret).verify(call.body, {
      "webhook-id": String(call.headers["webhook-id"]),
      "webhook-timestamp": String(call.headers["webhook-timestamp"]),
      "webhook-signature": String(call.headers["webhook-signature"]),
    });
    return true;
  } catch {
    return false;
  } finally {
    Date.now = realNow;
  }
}
