import type { Metrics, WebhookOutcome } from "../../metrics/metrics";
import { policiesOfKind } from "../../storage/policies";
import type { ListenAddress } from "../../webhooks/addressGuard";
import { type CallOptions, type CallResult, callWebhook } from "../../webhooks/call";
import { registeredWebhookRequest, type WebhookRequest, webhookRuleRequest } from "../../webhooks/requests";
import { accountWebhookSecret, guardOf, type WebhookSettings, webhookSettings } from "../../webhooks/settings";
import { pass, type Rule, refuse } from "../rule";

const RULE = "webhooks";

/**
 * Names a webhook in a refusal by its origin only: the reason goes back to the wallet, and paths and queries of
 * webhook URLs often carry the dApp's own tokens.
 */
function origin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return "an invalid URL";
  }
}

/**
 * Rule 9: every active registered webhook and every active WEBHOOK rule must answer `arePoliciesVerified: true`. All
 * are called at once, each within the timeout; every refusal is named in the reason. No webhook, no call. Requests
 * are signed with the paymaster's account's secret, and timestamped by `now` (the service's clock); `selfAddresses` are
 * where this service listens (never called).
 */
export function webhookRule(
  context: WebhookSettings | undefined,
  selfAddresses: () => readonly ListenAddress[],
  now: () => number,
  metrics?: Metrics,
): Rule {
  const settings = webhookSettings(context);
  const guard = guardOf(settings, selfAddresses);
  return {
    name: RULE,
    async evaluate({ setup, userOp, version, webhookData }) {
      const targets: { label: string; request: WebhookRequest }[] = [
        ...setup.webhooks.map((webhook) => ({
          label: `Webhook ${webhook.id} (${origin(webhook.url)})`,
          request: registeredWebhookRequest(webhook.url, webhook.requestType, webhookData),
        })),
        ...policiesOfKind(setup.policies, "WEBHOOK").map(({ name, policyData: { url } }) => ({
          label: `Webhook rule "${name}" (${origin(url)})`,
          request: webhookRuleRequest(url, webhookData, version.webhookJson(userOp)),
        })),
      ];
      if (targets.length === 0) return pass(RULE);
      const secret = accountWebhookSecret(settings, setup.accountId);
      const options = { guard, timeoutMs: settings.timeoutMs, secret, lookup: settings.lookup, nowMs: now };
      const results = await Promise.all(targets.map((target) => observedCall(target.request, options, metrics)));
      const refusals = results.flatMap((result, index) =>
        result.ok ? [] : [`${targets[index]?.label} refused: ${result.reason}`],
      );
      return refusals.length === 0 ? pass(RULE) : refuse(RULE, refusals.join("; "));
    },
  };
}

/** One webhook call, counted and timed by outcome (verified, refused, timeout). */
async function observedCall(request: WebhookRequest, options: CallOptions, metrics?: Metrics): Promise<CallResult> {
  const started = performance.now();
  const result = await callWebhook(request, options);
  if (metrics) {
    const outcome: WebhookOutcome = result.ok
      ? "verified"
      : result.reason.startsWith("timed out")
        ? "timeout"
        : "refused";
    metrics.webhookCalls.inc({ outcome });
    metrics.webhookSeconds.observe({ outcome }, (performance.now() - started) / 1000);
  }
  return result;
}
