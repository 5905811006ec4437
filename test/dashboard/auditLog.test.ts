// The dashboard's audit log page in a real browser (the system's Chromium driven by playwright-core) against the real
// app on a real port: the writes the account made, newest first, with the token's name and each change before → after,
// filtered by paymaster, and no secret on the page.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import type { Browser, Page } from "playwright-core";
import { buildDashboard } from "../../scripts/buildDashboard";
import { type Dapp, startTestApp, type TestApp } from "../helpers/app";
import { launchChromium, screenshotBothSizes, watchConsole } from "../helpers/browser";

let folder: string;
let t: TestApp;
let baseUrl: string;
let browser: Browser;
let page: Page;
let dapp: Dapp;
let other: Dapp;

before(async () => {
  folder = mkdtempSync(path.join(tmpdir(), "paymaster-dashboard-audit-"));
  await buildDashboard(folder);
  t = await startTestApp({ dashboardFolder: folder });
  baseUrl = await t.app.listen({ host: "127.0.0.1", port: 0 });
  dapp = await t.dapp({ name: "shop" });
  other = await t.dapp({ name: "game", token: dapp.token });
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
});
after(async () => {
  await browser?.close();
  await t?.close();
  if (folder) rmSync(folder, { recursive: true, force: true });
});

test("the audit log page lists the account's writes with their changes, and filters by paymaster", async () => {
  const console_ = watchConsole(page);
  const limit = await t.call("POST", "paymaster-policy", {
    token: dapp.token,
    apiKey: dapp.apiKey,
    body: {
      name: "daily",
      policyType: "PAYMASTER_SA_LIMIT",
      policyData: {
        type: "PAYMASTER",
        cycleDuration: { value: 1, unit: "day" },
        threshold: 10,
        thresholdType: "COUNT",
      },
    },
  });
  assert.equal(limit.status, 200);
  const policyId = (limit.body.data as { _id: string })._id;
  await t.call("PATCH", `paymaster-policy/limit/${policyId}`, {
    token: dapp.token,
    apiKey: dapp.apiKey,
    body: { threshold: 25 },
  });
  await t.call("POST", "webhook", {
    token: other.token,
    apiKey: other.apiKey,
    body: { webhookUrl: "https://hooks.example.com/v?secret=hunter2", requestType: "POST" },
  });

  await page.goto(`${baseUrl}/dashboard`);
  await page.getByLabel("Auth token").fill(dapp.token);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("link", { name: "Audit log" }).click();
  await page.getByRole("heading", { name: "Audit log" }).waitFor();
  const rows = page.locator("table.audit tbody tr");
  await rows.first().waitFor();
  // Newest first: the webhook, the limit update, the rule, then the two paymasters' creation.
  assert.equal(await rows.count(), 5);
  const newest = (await rows.nth(0).textContent()) ?? "";
  assert.match(newest, /POST \/webhook/);
  assert.match(newest, /game/);
  assert.match(newest, /https:\/\/hooks\.example\.com\/v\?\*\*\*/);
  const update = (await rows.nth(1).textContent()) ?? "";
  assert.match(update, new RegExp(`PATCH /paymaster-policy/limit/${policyId}`));
  assert.match(update, /"threshold":10.*→.*"threshold":25/);
  assert.match(update, /first/, "the token's name");
  const body = (await page.textContent("body")) ?? "";
  for (const secret of [dapp.apiKey, other.apiKey, dapp.token, "hunter2"]) assert.ok(!body.includes(secret));

  await page.getByLabel("Paymaster").selectOption({ label: "shop" });
  await page.getByRole("button", { name: "Filter" }).click();
  // Locators rather than waitForFunction: a predicate given as a string is evaluated with eval, which the dashboard's
  // Content-Security-Policy (script-src 'self') refuses whenever the first check does not already hold.
  await rows.filter({ hasText: "/webhook" }).waitFor({ state: "detached" });
  await rows.nth(2).waitFor();
  assert.equal(await rows.count(), 3, "the shop's three writes: the limit update, the rule and its creation");
  assert.doesNotMatch((await page.locator("table.audit").textContent()) ?? "", /webhook/);
  await screenshotBothSizes(page, "audit-log");
  assert.deepEqual(console_.errors, [], "no console error");
});
