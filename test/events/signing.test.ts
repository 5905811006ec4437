// The code alone: our Standard Webhooks signature is the standardwebhooks package's, byte for byte, and verifies with
// it (one signature per secret during a rotation); sealed secrets open only under their key and for their endpoint; the
// retries' waits grow exponentially, halved at most by their jitter, up to the cap.
import assert from "node:assert/strict";
import { test } from "node:test";
import { Webhook } from "standardwebhooks";
import { generatePrivateKey } from "viem/accounts";
import { Secret } from "../../src/config";
import { DEFAULT_EVENT_TIMERS, retryDelayMs } from "../../src/events/delivery";
import { openSecret, sealSecret } from "../../src/events/sealedSecret";
import { newEndpointSecret, standardHeaders, standardSignature } from "../../src/events/standardSignature";

const body = JSON.stringify({ id: "evt_1", type: "sponsorship.signed", sequence: 1, data: { nonce: "0" } });

test("our signature is the package's, and the package verifies our headers", () => {
  const secret = newEndpointSecret();
  const seconds = Math.floor(Date.now() / 1000);
  const webhook = new Webhook(secret);
  assert.equal(
    standardSignature(secret, "evt_1", seconds, body),
    webhook.sign("evt_1", new Date(seconds * 1000), body),
  );
  const headers = standardHeaders([secret], "evt_1", seconds, body);
  assert.deepEqual(webhook.verify(body, headers), JSON.parse(body));
  assert.throws(() => webhook.verify(`${body} `, headers), /No matching signature found/);
  assert.throws(() => new Webhook(newEndpointSecret()).verify(body, headers), /No matching signature found/);
});

test("during a rotation the header carries one signature per secret, and either secret verifies it", () => {
  const [old, current] = [newEndpointSecret(), newEndpointSecret()];
  const headers = standardHeaders([current, old], "evt_2", Math.floor(Date.now() / 1000), body);
  assert.equal(headers["webhook-signature"]?.split(" ").length, 2);
  assert.doesNotThrow(() => new Webhook(old).verify(body, headers));
  assert.doesNotThrow(() => new Webhook(current).verify(body, headers));
});

test("a sealed secret opens under its key and for its endpoint only", () => {
  const key = new Secret(generatePrivateKey());
  const secret = newEndpointSecret();
  const sealed = sealSecret(key, "endpoint-a", secret);
  assert.ok(!sealed.includes(secret.slice("whsec_".length, 20)));
  assert.notEqual(sealSecret(key, "endpoint-a", secret), sealed, "a new nonce each time");
  assert.equal(openSecret(key, "endpoint-a", sealed), secret);
  assert.throws(() => openSecret(key, "endpoint-b", sealed), /does not open/);
  assert.throws(() => openSecret(new Secret(generatePrivateKey()), "endpoint-a", sealed), /does not open/);
});

test("retries wait exponentially longer, with up to half of each wait random, up to the cap", () => {
  const timers = DEFAULT_EVENT_TIMERS;
  assert.equal(
    retryDelayMs(1, timers, () => 1),
    5_000,
  );
  assert.equal(
    retryDelayMs(1, timers, () => 0),
    2_500,
  );
  assert.equal(
    retryDelayMs(3, timers, () => 1),
    20_000,
  );
  assert.equal(
    retryDelayMs(40, timers, () => 1),
    3_600_000,
  );
  assert.equal(
    retryDelayMs(40, timers, () => 0),
    1_800_000,
  );
  // About a day of retries before the endpoint is turned off: how many attempts that is at most.
  let elapsed = 0;
  let attempts = 0;
  while (elapsed < timers.disableAfterMs) elapsed += retryDelayMs(++attempts, timers, () => 0.5);
  assert.ok(attempts > 20 && attempts < 60, `${attempts} attempts in a day`);
});
