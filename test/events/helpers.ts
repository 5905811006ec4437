import assert from "node:assert/strict";
import type { Dapp, TestApp } from "../helpers/app";

export interface CreatedEndpoint {
  id: string;
  secret: string;
  url: string;
  events: string[];
  enabled: boolean;
}

/** Adds an event endpoint through the management API and returns it with its secret. */
export async function addEndpoint(
  t: TestApp,
  dapp: Dapp,
  url: string,
  events: string[] = ["sponsorship.signed"],
): Promise<CreatedEndpoint> {
  const reply = await t.call("POST", "event-endpoints", {
    token: dapp.token,
    apiKey: dapp.apiKey,
    body: { url, events },
  });
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  return reply.body.data as CreatedEndpoint;
}

/** The endpoint as the management API shows it. */
export async function endpointState(t: TestApp, dapp: Dapp, id: string) {
  const reply = await t.call("GET", `event-endpoints/${id}`, { token: dapp.token, apiKey: dapp.apiKey });
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  return reply.body.data as {
    enabled: boolean;
    disabledReason: string | null;
    failingSince: number | null;
    pending: number;
    previousSecretUntil: number | null;
  };
}
