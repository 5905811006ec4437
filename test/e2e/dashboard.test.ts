// The web dashboard in a real browser (the system's Chromium driven by playwright-core) against the real service
// process with its local chain: sign-in, a paymaster, a funding wallet linked by a pasted signature and by an injected
// EIP-1193 wallet backed by a real viem account, a deposit through that wallet, a whitelisted contract, rules, a
// sponsorship through the RPC seen in the activity table and chart, a paused rule, and sign-out; no console error on
// any page. Each page is saved at 1280×800 and 390×844 in test-results/dashboard/.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import type { Browser, BrowserContext, Locator, Page } from "playwright-core";
import {
  type Address,
  concat,
  createPublicClient,
  createWalletClient,
  encodeFunctionData,
  type Hex,
  http,
  isAddressEqual,
} from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { buildDashboard } from "../../scripts/buildDashboard";
import { simpleAccountFactoryArtifact } from "../../src/bindings/paymasters/artifacts";
import { ANVIL_DEFAULT_KEYS, type LocalChainInfo, readLocalChainInfo } from "../../src/devChain/localChain";
import { simpleAccountAbi, simpleAccountFactoryAbi } from "../../src/devChain/simpleAccount";
import { startEventReceiver } from "../events/receiver";
import { launchChromium, screenshotBothSizes, watchConsole } from "../helpers/browser";
import { postJsonRpc } from "../helpers/postJsonRpc";
import { embeddedEnv, type RunningService, startService } from "../helpers/service";

let dataDir: string;
let service: RunningService;
let chain: LocalChainInfo;
let authToken: string;
let browser: Browser;
let context: BrowserContext;
// The page's own expressions are passed as text: this side is compiled without the DOM's types.
let page: Page;
let console_: ReturnType<typeof watchConsole>;

/** The browser wallet's account: anvil's funded key #2, so that its depositFor can pay. */
const walletAccount = privateKeyToAccount(ANVIL_DEFAULT_KEYS.fundingWallet);
/** Every request the page made, to check that the token never travels in a URL. */
const requestedUrls: string[] = [];

before(async () => {
  await buildDashboard();
  dataDir = mkdtempSync(path.join(tmpdir(), "paymaster-dashboard-"));
  service = await startService(embeddedEnv(dataDir, { LOCAL_CHAIN: "auto", LOG_LEVEL: "info" }));
  const output = await service.outputMatching(/authToken, shown only this once:\n(pm_\S+)/);
  authToken = (/authToken, shown only this once:\n(pm_\S+)/.exec(output) as RegExpExecArray)[1] as string;
  const info = readLocalChainInfo(dataDir);
  assert.ok(info, "the service runs its local chain");
  chain = info;
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: service.baseUrl });
  await injectWallet(context);
  page = await context.newPage();
  page.on("request", (request) => requestedUrls.push(request.url()));
  console_ = watchConsole(page);
});

after(async () => {
  await browser?.close();
  await service?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

/**
 * window.ethereum as a browser wallet injects it (EIP-1193), answered in this process by a real viem account on the
 * local chain: personal_sign signs the message's bytes, eth_sendTransaction signs and sends, then waits for the receipt.
 */
async function injectWallet(target: BrowserContext) {
  const transport = http(chain.rpcUrl);
  const wallet = createWalletClient({ account: walletAccount, transport });
  const publicClient = createPublicClient({ transport });
  await target.exposeFunction("__walletRequest", async (method: string, params: unknown[]) => {
    switch (method) {
      case "eth_requestAccounts":
      case "eth_accounts":
        return [walletAccount.address];
      case "eth_chainId":
        return `0x${chain.chainId.toString(16)}`;
      case "personal_sign": {
        const [message, address] = params as [Hex, Address];
        assert.ok(isAddressEqual(address, walletAccount.address), "personal_sign names the wallet's account");
        return walletAccount.signMessage({ message: { raw: message } });
      }
      case "eth_sendTransaction": {
        const [tx] = params as [{ from: Address; to: Address; value: Hex; data: Hex }];
        const hash = await wallet.sendTransaction({ chain: null, to: tx.to, value: BigInt(tx.value), data: tx.data });
        const receipt = await publicClient.waitForTransactionReceipt({ hash });
        assert.equal(receipt.status, "success", "the wallet's transaction succeeded");
        return hash;
      }
      default:
        throw new Error(`the test wallet does not handle ${method}`);
    }
  });
  // As text: a function would be serialized as tsx compiled it, with helpers the page does not have.
  await target.addInitScript({
    content: "window.ethereum = { request: ({ method, params }) => window.__walletRequest(method, params ?? []) };",
  });
}

/**
 * The y-axis labels of the charts in page order, with their rendered extent and the part of their chart a person
 * sees (the svg, inside its figure, which scrolls sideways on a phone): a label cut at the chart's edge sticks out.
 */
async function yAxisLabels(): Promise<
  { text: string; left: number; right: number; visibleLeft: number; visibleRight: number }[]
> {
  return page.evaluate(`[...document.querySelectorAll("figure.chart svg[role=img] > text[text-anchor=end]")].map((label) => {
    const box = label.getBoundingClientRect();
    const svg = label.closest("svg").getBoundingClientRect();
    const figure = label.closest("figure").getBoundingClientRect();
    return {
      text: label.textContent,
      left: box.left,
      right: box.right,
      visibleLeft: Math.max(svg.left, figure.left),
      visibleRight: Math.min(svg.right, figure.right),
    };
  })`);
}

/**
 * Every element of the page filled with a pattern (`fill="url(#id)"`): what it shows (a bar's tooltip, or the legend
 * entry it draws), the id it names and how many elements of the page carry that id (a pattern, once, or nothing).
 */
async function patternFills(): Promise<{ shows: string; id: string; pattern: string; sameId: number }[]> {
  return page.evaluate(`[...document.querySelectorAll("[fill^='url(#']")].map((element) => {
    const id = /^url\\(#(.+)\\)$/.exec(element.getAttribute("fill"))?.[1] ?? "";
    const named = document.querySelectorAll("[id='" + id + "']");
    return {
      shows: (element.querySelector("title") ?? element.closest(".legend-item") ?? element).textContent.trim(),
      id,
      pattern: named[0]?.tagName ?? "",
      sameId: named.length,
    };
  })`);
}

/**
 * How many colours a person sees inside an element, its outline left out (2 px each side): an empty outline shows one
 * (the background), a pattern at least two.
 */
async function coloursInside(target: Locator): Promise<number> {
  const png = (await target.screenshot()).toString("base64");
  const decoder = await browser.newPage();
  try {
    return (await decoder.evaluate(`(async () => {
      const bytes = Uint8Array.from(atob(${JSON.stringify(png)}), (c) => c.charCodeAt(0));
      const image = await createImageBitmap(new Blob([bytes], { type: "image/png" }));
      const canvas = new OffscreenCanvas(image.width, image.height);
      const context = canvas.getContext("2d");
      context.drawImage(image, 0, 0);
      const { data } = context.getImageData(2, 2, image.width - 4, image.height - 4);
      const colours = new Set();
      for (let i = 0; i < data.length; i += 4) colours.add(data.slice(i, i + 4).join());
      return colours.size;
    })()`)) as number;
  } finally {
    await decoder.close();
  }
}

const tab = (name: string) => page.getByRole("navigation", { name: "Paymaster sections" }).getByRole("link", { name });

/** A sponsored operation as a wallet asks for it: a new SimpleAccount whose first operation deploys it. */
async function sponsorThroughRpc(apiKey: string) {
  const factory = chain.simpleAccountFactory;
  const owner = privateKeyToAccount(generatePrivateKey());
  const publicClient = createPublicClient({ transport: http(chain.rpcUrl) });
  const sender = await publicClient.readContract({
    address: factory,
    abi: simpleAccountFactoryAbi,
    functionName: "getAddress",
    args: [owner.address, 0n],
  });
  const create = (who: Address) =>
    encodeFunctionData({ abi: simpleAccountFactoryAbi, functionName: "createAccount", args: [who, 0n] });
  const userOp = {
    sender,
    nonce: "0x0",
    initCode: concat([factory, create(owner.address)]),
    callData: encodeFunctionData({
      abi: simpleAccountAbi,
      functionName: "execute",
      args: [factory, 0n, create(privateKeyToAccount(generatePrivateKey()).address)],
    }),
    paymasterAndData: "0x",
    signature: "0x",
  };
  const { body } = await postJsonRpc<{ paymasterAndData: Hex; reason?: string }>(
    `${service.baseUrl}/api/v1/${chain.chainId}/${apiKey}`,
    "pm_sponsorUserOperation",
    [
      userOp,
      {
        mode: "SPONSORED",
        calculateGasLimits: true,
        sponsorshipInfo: { smartAccountInfo: { name: "INFINITISM", version: "1.0.0" } },
      },
    ],
  );
  assert.ok(body.result && !body.result.reason, `sponsored: ${JSON.stringify(body)}`);
  assert.ok(body.result.paymasterAndData.length > 2);
  return sender;
}

test("the dashboard, page by page, in Chromium", { timeout: 240_000 }, async (t) => {
  let apiKey = "";

  await t.test(
    "served at /dashboard with its security headers, and the sign-in page asks for the token",
    async (step) => {
      const response = await page.goto(`${service.baseUrl}/dashboard`);
      assert.ok(response?.ok());
      const headers = (await response?.allHeaders()) ?? {};
      assert.match(headers["content-security-policy"] ?? "", /script-src 'self'/);
      assert.equal(headers["x-frame-options"], "DENY");
      assert.equal(headers["referrer-policy"], "no-referrer");
      await page.getByLabel("Auth token").waitFor();
      // A figure, not a check (speed targets live in bench/): how long the first page took to load on loopback.
      const loadMs = await page.evaluate("performance.getEntriesByType('navigation')[0].loadEventEnd");
      step.diagnostic(`first page loaded in ${Math.round(Number(loadMs))} ms`);
      await screenshotBothSizes(page, "sign-in");
    },
  );

  await t.test("an empty token is asked for beside the field, without a request", async () => {
    const before = requestedUrls.length;
    await page.getByRole("button", { name: "Sign in" }).click();
    const error = page.locator("#token-error");
    await error.waitFor();
    assert.equal(await error.textContent(), "Enter the auth token (pm_…).");
    assert.equal(requestedUrls.length, before);
  });

  await t.test("a wrong token is said not to be accepted beside the field, and nothing else", async () => {
    console_.expect(/status of 401/);
    await page.getByLabel("Auth token").fill("pm_not-a-token");
    await page.getByRole("button", { name: "Sign in" }).click();
    // Not the API's words for a missing header ("Auth token is required in the headers"): a token was typed.
    const error = page.locator("#token-error", { hasText: "not accepted" });
    await error.waitFor();
    assert.equal(
      await error.textContent(),
      "This auth token was not accepted: check that it was copied whole, or make a new one with npm run account.",
    );
    assert.equal(await page.getByLabel("Auth token").getAttribute("aria-invalid"), "true");
    assert.equal(await page.evaluate("sessionStorage.length"), 0, "a refused token is not kept");
  });

  await t.test("signs in from the keyboard alone; the token is kept in session storage only", async () => {
    // A fresh page: the first Tab starts from the top of the document.
    await page.reload();
    await page.getByLabel("Auth token").waitFor();
    await page.keyboard.press("Tab");
    assert.equal(await page.evaluate("document.activeElement.id"), "token", "the token field is the first stop");
    await page.keyboard.type(authToken);
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "Paymasters" }).waitFor();
    assert.equal(await page.evaluate("Object.values({ ...sessionStorage }).join()"), authToken);
    assert.equal(await page.evaluate("localStorage.length"), 0);
    assert.equal(await page.evaluate("document.cookie"), "");
  });

  await t.test("creates a paymaster on a chain from the picker, and lists it", async () => {
    const picker = page.getByLabel("Chain");
    const options = await picker.locator("option").allTextContents();
    assert.ok(
      options.some((option) => option.endsWith("(31337)")),
      `the supported chains: ${options.join(", ")}`,
    );
    await picker.selectOption("31337");
    await page.getByLabel("Name").fill("my-game");
    await page.getByRole("button", { name: "Create paymaster" }).click();
    await page.getByRole("heading", { name: /my-game/ }).waitFor();
    apiKey = (await page.locator(".copyable", { hasText: "apiKey" }).locator("code").textContent()) ?? "";
    assert.match(apiKey, /^\S{16,}$/);
    // The local chain serves every version (the development chain is not checked: this process deployed it). The
    // chains are fetched apart from the paymaster, so the line may be drawn before they arrive: waited for, not read.
    await page
      .getByText("EntryPoints served:")
      .filter({ hasText: /v0\.6\s*v0\.7\s*v0\.8\s*v0\.9/ })
      .waitFor();
    const rpcUrl = await page.locator(".copyable", { hasText: "RPC URL" }).locator("code").textContent();
    assert.equal(rpcUrl, `${service.baseUrl}/api/v1/31337/${apiKey}`);
    for (const snippet of ["createPaymasterClient", "createPimlicoClient", "@biconomy/account"]) {
      assert.ok((await page.locator("pre", { hasText: snippet }).count()) === 1, `a ${snippet} snippet`);
    }
    assert.ok((await page.locator("pre", { hasText: rpcUrl ?? "" }).count()) === 3, "each snippet has the RPC URL");
    await page.getByRole("button", { name: "Copy RPC URL" }).click();
    await page.getByText("Copied").first().waitFor();
    assert.equal(await page.evaluate("navigator.clipboard.readText()"), rpcUrl);
    await screenshotBothSizes(page, "paymaster-overview");

    await page.getByRole("link", { name: "Paymasters" }).first().click();
    // The row is drawn with the paymasters, its chain's versions when the chains arrive: waited for whole.
    await page
      .getByRole("row", { name: /my-game/ })
      .filter({ hasText: new RegExp(`\\(31337\\)\\s*v0\\.6v0\\.7v0\\.8v0\\.9.*${apiKey}.*not linked.*Active`) })
      .waitFor();
    await screenshotBothSizes(page, "paymasters");
  });

  await t.test("a name already taken: the API's message beside the Name field", async () => {
    console_.expect(/status of 400/);
    await page.getByLabel("Name").fill("my-game");
    await page.getByRole("button", { name: "Create paymaster" }).click();
    const error = page.locator("#paymaster-name-error");
    await error.waitFor();
    assert.equal(await error.textContent(), "paymaster_name_exists");
    await page.getByRole("link", { name: "my-game" }).click();
    await page.getByRole("heading", { name: /my-game/ }).waitFor();
  });

  await t.test("links a funding wallet with a pasted signature", async () => {
    await tab("Funding").click();
    await page.getByRole("button", { name: "Get the message to sign" }).click();
    const message =
      (await page.locator(".copyable", { hasText: "Message to sign" }).locator("code").textContent()) ?? "";
    assert.match(message, /link this wallet as the funding wallet/);
    const elsewhere = privateKeyToAccount(generatePrivateKey());
    await page.getByLabel("Wallet address").fill(elsewhere.address);
    await page.getByLabel("Signature").fill(await elsewhere.signMessage({ message }));
    await page.getByRole("button", { name: "Link wallet" }).click();
    await page.getByText(`Linked ${elsewhere.address.toLowerCase()}.`).waitFor();
    await page.getByText(elsewhere.address.toLowerCase(), { exact: true }).waitFor();
  });

  await t.test("links the browser wallet through personal_sign, and deposits through it (depositFor)", async () => {
    await page.getByRole("button", { name: "Get the message to sign" }).click();
    await page.getByRole("button", { name: "Sign with browser wallet" }).click();
    const linked = walletAccount.address.toLowerCase();
    await page.getByText(`Linked ${linked}.`).waitFor();
    await page.getByText(linked, { exact: true }).waitFor();

    await page.getByLabel("EntryPoint version").selectOption("0.6");
    await page.getByLabel("Amount (ETH)").fill("1.5");
    await page.getByRole("button", { name: "Deposit", exact: true }).click();
    await page.getByText(/Deposit sent: transaction 0x[0-9a-f]{64}/).waitFor();
    const v06 = page.getByRole("row", { name: /^v0\.6/ });
    await v06.getByText("1.5 ETH").first().waitFor();
    assert.match((await v06.textContent()) ?? "", /1\.5 ETH\s*0 ETH\s*1\.5 ETH/, "deposit, held, available");
    await screenshotBothSizes(page, "funding");
  });

  await t.test("whitelists a contract from a pasted ABI with chosen methods, then changes them", async () => {
    await tab("Contracts").click();
    // An uploaded compiler artifact fills the ABI with its "abi" field and offers its functions.
    await page.getByLabel("Or upload an ABI file").setInputFiles({
      name: "SimpleAccountFactory.json",
      mimeType: "application/json",
      buffer: Buffer.from(
        JSON.stringify({ contractName: "SimpleAccountFactory", abi: simpleAccountFactoryArtifact.abi }),
      ),
    });
    // The file is read asynchronously: its functions show once it has been, and only then is the field filled.
    await page.getByRole("group", { name: "Sponsored methods" }).getByLabel("createAccount").waitFor();
    assert.deepEqual(JSON.parse(await page.getByLabel("ABI (JSON)").inputValue()), simpleAccountFactoryArtifact.abi);
    await page.getByLabel("Contract name").fill("SimpleAccountFactory");
    await page.getByLabel("Contract address").fill(chain.simpleAccountFactory);
    await page.getByLabel("ABI (JSON)").fill(JSON.stringify(simpleAccountFactoryArtifact.abi));
    const chooser = page.getByRole("group", { name: "Sponsored methods" });
    await chooser.getByLabel("createAccount").check();
    assert.equal(await chooser.getByLabel("getAddress").isChecked(), false);
    await page.getByRole("button", { name: "Add contract" }).click();
    const card = page.getByRole("article", { name: /SimpleAccountFactory/ });
    await card.waitFor();
    const methods = card.getByRole("group", { name: "Sponsored methods of SimpleAccountFactory" });
    assert.equal(await methods.getByLabel("createAccount").isChecked(), true);
    assert.equal(await methods.getByLabel("getAddress").isChecked(), false);
    await methods.getByLabel("getAddress").check();
    await card.getByRole("button", { name: "Save methods" }).click();
    await card.getByText("Saved.").waitFor();
    await methods.getByLabel("getAddress").uncheck();
    await card.getByRole("button", { name: "Save methods" }).click();
    await card.getByText("Saved.").waitFor();
    await screenshotBothSizes(page, "contracts");
  });

  await t.test(
    "adds a wallet-deployment rule and a spending limit; a bad threshold is refused beside its field",
    async () => {
      await tab("Rules").click();
      await page.getByLabel("Rule name").last().fill("deployments");
      await page.getByLabel("Kind").selectOption("WALLET_DEPLOYMENT");
      await page.getByRole("button", { name: "Add rule" }).click();
      await page.getByRole("article", { name: /deployments/ }).waitFor();

      await page.getByLabel("Rule name").last().fill("daily cap");
      await page.getByLabel("Kind").selectOption("PAYMASTER_SA_LIMIT");
      await page.getByLabel("Threshold").fill("-1");
      console_.expect(/status of 400/);
      await page.getByRole("button", { name: "Add rule" }).click();
      const error = page.locator("#new-rule-threshold-error");
      await error.waitFor();
      assert.match((await error.textContent()) ?? "", /threshold/);
      await page.getByLabel("Threshold").fill("0.5");
      await page.getByRole("button", { name: "Add rule" }).click();
      const limit = page.getByRole("article", { name: /daily cap/ });
      await limit.waitFor();
      await limit.getByText(/This cycle: 0 of 0\.5 ETH used/).waitFor();

      // The webhooks' signing key: shown only on request, and hidden again.
      await page.getByRole("button", { name: "Show signing secret" }).click();
      const secret = page.locator("code.secret");
      assert.match((await secret.textContent()) ?? "", /^(0x)?[0-9a-f]{32,}$/);
      await page.getByRole("button", { name: "Hide signing secret" }).click();
      assert.equal(await secret.count(), 0);
    },
  );

  let sender = "";
  await t.test(
    "a sponsorship through the RPC shows in the limit's usage, the activity table and the chart",
    async () => {
      sender = await sponsorThroughRpc(apiKey);
      await page.reload();
      const limit = page.getByRole("article", { name: /daily cap/ });
      const usage = limit.locator("meter");
      await usage.waitFor();
      assert.ok(Number(await usage.getAttribute("value")) > 0, "the limit counts the sponsorship");
      await screenshotBothSizes(page, "rules");

      await tab("Activity").click();
      const row = page.getByRole("row", { name: /pending/ });
      await row.waitFor();
      assert.match((await row.textContent()) ?? "", new RegExp(`${sender.slice(0, 8)}.*at most`, "i"));
      // The chart is fetched apart from the ledger: its bar is waited for, then counted.
      const sponsoredBars = page.locator("svg[role=img] rect title", { hasText: /Sponsored \(solid\): 1$/ });
      await sponsoredBars.first().waitFor({ state: "attached" });
      assert.equal(await sponsoredBars.count(), 1, "one bucket of the chart has the sponsorship");
      await page.getByText("The figures as a table").click();
      // The pending sponsorship holds a small amount (about 0.0006 ETH): the spend chart's top label is that, in full.
      const held = await page.locator(".charts details tbody tr td:nth-child(5)").allTextContents();
      const heldMax = Math.max(...held.map(Number));
      assert.ok(heldMax > 0 && heldMax < 0.01, `held by the pending sponsorship: ${held.join(", ")}`);
      for (const size of [
        { width: 390, height: 844 },
        { width: 1280, height: 800 },
      ]) {
        await page.setViewportSize(size);
        const labels = await yAxisLabels();
        assert.equal(labels.length, 4, "two labels on each chart's y-axis");
        for (const label of labels) {
          assert.ok(label.left >= label.visibleLeft, `${label.text} starts inside the chart at ${size.width}px`);
          assert.ok(label.right <= label.visibleRight, `${label.text} ends inside the chart at ${size.width}px`);
        }
        const spendTop = labels[2]?.text ?? "";
        assert.match(spendTop, /^\d+(\.\d*[1-9])?$/, "a plain decimal without trailing zeros");
        assert.ok(Math.abs(Number(spendTop) - heldMax) / heldMax < 1e-3, `${spendTop} is the chart's top, ${heldMax}`);
      }
      // Refused bars hatched and held spend dotted, in the bars and the legends: every pattern a fill names exists, once
      // in the page, and is seen (a missing one leaves an empty outline).
      const fills = await patternFills();
      for (const fill of fills) {
        assert.equal(fill.pattern, "pattern", `${fill.shows}: the fill url(#${fill.id}) names a pattern in the page`);
        assert.equal(fill.sameId, 1, `${fill.shows}: the id ${fill.id} is unique in the page`);
      }
      const uses = (seriesLabel: string) => fills.filter((fill) => fill.shows.includes(seriesLabel));
      const refusedFills = uses("Refused (hatched)");
      const heldFills = uses("Held by pending ones (dotted)");
      assert.equal(refusedFills.length, held.length + 1, "each refused bar and its legend square are hatched");
      assert.equal(heldFills.length, held.length + 1, "each held bar and its legend square are dotted");
      assert.notEqual(refusedFills[0]?.id, heldFills[0]?.id, "hatched and dotted are two patterns");
      for (const name of ["Refused (hatched)", "Held by pending ones (dotted)"]) {
        const square = page.locator(".legend-item", { hasText: name }).locator("svg");
        assert.ok((await coloursInside(square)) > 1, `the legend square of ${name} shows its pattern`);
      }
      const heldBar = page.locator("svg[role=img] rect", { hasText: /Held by pending ones \(dotted\): (?!0$)/ });
      assert.equal(await heldBar.count(), 1, "one bucket holds the pending sponsorship's cost");
      assert.ok((await coloursInside(heldBar)) > 1, "the held bar shows its dots");
      await screenshotBothSizes(page, "activity");

      await page.getByLabel("Status").selectOption("refused");
      await page.getByRole("button", { name: "Filter" }).click();
      await page.getByText("No sponsorship matches.").waitFor();
    },
  );

  await t.test("adds a sender blocklist, then edits it through the general update", async () => {
    await tab("Rules").click();
    const [first, second] = [generatePrivateKey(), generatePrivateKey()].map((key) => privateKeyToAccount(key).address);
    await page.getByLabel("Rule name").last().fill("blocked");
    await page.getByLabel("Kind").selectOption("SENDER_BLOCKLIST");
    await page.getByLabel("Sender addresses").fill(first as string);
    await page.getByRole("button", { name: "Add rule" }).click();
    const rule = page.getByRole("article", { name: /blocked/ });
    await rule.getByText("Never sponsors these 1 sender").waitFor();
    await rule.getByRole("button", { name: "Edit blocked" }).click();
    await rule.getByLabel("Sender addresses").fill(`${first}\n${second}`);
    await rule.getByRole("button", { name: "Save blocked" }).click();
    await rule.getByText("Never sponsors these 2 senders").waitFor();
  });

  await t.test("pauses the whole paymaster from its overview, and resumes it", async () => {
    await tab("Overview").click();
    await page.getByRole("button", { name: "Pause sponsorship" }).click();
    await page.getByRole("button", { name: "Resume sponsorship" }).waitFor();
    await page.getByText("Every sponsorship request is refused").waitFor();
    await page.getByRole("button", { name: "Resume sponsorship" }).click();
    await page.getByRole("button", { name: "Pause sponsorship" }).waitFor();
  });

  await t.test(
    "sets the sponsor wallets are shown from its overview: a name and an icon file; a GIF is refused",
    async () => {
      await tab("Overview").click();
      const section = page.locator("section", { has: page.getByRole("heading", { name: "Sponsor shown in wallets" }) });
      await section.getByLabel("Sponsor name").fill("My Game");
      const gif = { name: "icon.gif", mimeType: "image/gif", buffer: Buffer.from("GIF89a\x01\x00\x01\x00") };
      await section.getByLabel("Icon (PNG, WebP or SVG)").setInputFiles(gif);
      console_.expect(/status of 400/);
      await section.getByRole("button", { name: "Save sponsor" }).click();
      await section
        .getByText("icon has media type image/gif; only image/png, image/webp and image/svg+xml are accepted")
        .waitFor();
      const svg = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 8 8"><circle cx="4" cy="4" r="4"/></svg>';
      await section
        .getByLabel("Icon (PNG, WebP or SVG)")
        .setInputFiles({ name: "icon.svg", mimeType: "image/svg+xml", buffer: Buffer.from(svg) });
      await section.getByRole("img", { name: "The sponsor's icon" }).waitFor();
      await section.getByRole("button", { name: "Save sponsor" }).click();
      await section.getByText("Wallets are shown My Game.").waitFor();
      const listed = await fetch(`${service.baseUrl}/api/v2/public/sdk/paymasterParameters`, {
        headers: { authToken },
      }).then((reply) => reply.json() as Promise<{ data: { apiKey: string; sponsor: unknown }[] }>);
      const sponsor = listed.data.find((paymaster) => paymaster.apiKey === apiKey)?.sponsor;
      assert.deepEqual(sponsor, {
        name: "My Game",
        icon: `data:image/svg+xml;base64,${Buffer.from(svg).toString("base64")}`,
      });
      await screenshotBothSizes(page, "sponsor");
    },
  );

  await t.test("sets EntryPoint v0.9 validity in blocks from its overview; 0 is refused; back to seconds", async () => {
    await tab("Overview").click();
    const section = page.locator("section", {
      has: page.getByRole("heading", { name: "Validity in blocks (EntryPoint v0.9)" }),
    });
    const count = section.getByLabel("Blocks past the chain's head");
    const listedBlocks = async () => {
      const listed = await fetch(`${service.baseUrl}/api/v2/public/sdk/paymasterParameters`, {
        headers: { authToken },
      }).then((reply) => reply.json() as Promise<{ data: { apiKey: string; validityBlocks: unknown }[] }>);
      return listed.data.find((paymaster) => paymaster.apiKey === apiKey)?.validityBlocks;
    };
    await count.fill("0");
    console_.expect(/status of 400/);
    await section.getByRole("button", { name: "Use blocks" }).click();
    await section
      .getByText("blocks must be a whole number of blocks from 1 to 100000, or null for a window in seconds")
      .waitFor();
    assert.equal(await listedBlocks(), null, "nothing changed");
    await count.fill("150");
    await section.getByRole("button", { name: "Use blocks" }).click();
    await section.getByText("EntryPoint v0.9 signatures are valid for 150 blocks.").waitFor();
    assert.equal(await listedBlocks(), 150);
    await section.getByRole("button", { name: "Use seconds" }).click();
    await section.getByText("EntryPoint v0.9 signatures are valid for a time, in seconds.").waitFor();
    assert.equal(await listedBlocks(), null);
  });

  await t.test(
    "adds an event endpoint, its secret shown once; a sponsorship's delivery is listed, and replayed",
    async () => {
      const receiver = await startEventReceiver();
      try {
        await tab("Events").click();
        await page.getByLabel("Endpoint URL").fill("http://192.0.2.7/hook");
        console_.expect(/status of 400/);
        await page.getByRole("button", { name: "Add endpoint" }).click();
        await page.getByText("url is 192.0.2.7, a documentation address").waitFor();
        await page.getByLabel("Endpoint URL").fill(receiver.url);
        await page.getByRole("checkbox", { name: /sponsorship\.signed/ }).check();
        await page.getByRole("button", { name: "Add endpoint" }).click();
        const shown = page.getByRole("status").locator("code.value");
        await shown.waitFor();
        const secret = (await shown.textContent()) ?? "";
        assert.match(secret, /^whsec_/);
        receiver.secrets.push(secret);
        await screenshotBothSizes(page, "events");
        await page.getByRole("button", { name: "I have kept it" }).click();
        assert.equal(await page.getByText(secret).count(), 0, "the secret is shown once");

        await sponsorThroughRpc(apiKey);
        const [event] = await receiver.acceptedAtLeast(1);
        assert.deepEqual(event?.verifiedBy, [0]);
        const endpoint = page.getByRole("article", { name: `Endpoint ${receiver.url}` });
        await endpoint.getByRole("button", { name: "Recent deliveries" }).click();
        const row = endpoint.getByRole("row", { name: /sponsorship\.signed.*delivered/ });
        await row.waitFor();
        await row.getByRole("button", { name: "Replay" }).click();
        await page.getByText("is queued again").waitFor();
        const again = await receiver.acceptedAtLeast(2);
        assert.equal(again[1]?.id, event?.id, "the same event, sent again");
        await screenshotBothSizes(page, "event-deliveries");
      } finally {
        await receiver.close();
      }
    },
  );

  await t.test("pauses the limit, and resumes it", async () => {
    await tab("Rules").click();
    const limit = page.getByRole("article", { name: /daily cap/ });
    await limit.getByRole("button", { name: "Pause daily cap" }).click();
    await limit.getByText("Paused", { exact: true }).waitFor();
    await limit.getByRole("button", { name: "Resume daily cap" }).click();
    await limit.getByText("Active", { exact: true }).waitFor();
  });

  await t.test("signs out: the token is forgotten", async () => {
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByLabel("Auth token").waitFor();
    assert.equal(await page.evaluate("sessionStorage.length"), 0);
  });

  await t.test("the token never travelled in a URL, and no page logged an error", () => {
    assert.ok(requestedUrls.length > 0);
    assert.deepEqual(
      requestedUrls.filter((url) => url.includes(authToken)),
      [],
    );
    assert.deepEqual(console_.errors, []);
  });
});
