import { mkdirSync } from "node:fs";
import path from "node:path";
import { type Browser, type ConsoleMessage, chromium, type Page } from "playwright-core";

/** The system's Chromium (`.ci/run` installs Debian's package when it is missing); CHROMIUM_PATH names another. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/**
 * Headless Chromium for the browser tests. Without the background-networking flags it keeps trying to reach Google's
 * services, which a closed network answers slowly or not at all.
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

const SIZES = [
  { name: "1280x800", width: 1280, height: 800 },
  { name: "390x844", width: 390, height: 844 },
] as const;

/** Where the browser tests leave their screenshots (gitignored). */
const SCREENSHOTS = path.resolve(import.meta.dirname, "../../test-results/dashboard");

/**
 * A full-page screenshot of the page at each size, then back to the first. At each size nothing may stick out
 * sideways: the page scrolls down only (wide tables scroll inside their own box).
 */
export async function screenshotBothSizes(page: Page, name: string): Promise<string[]> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const files: string[] = [];
  for (const size of [...SIZES].reverse()) {
    await page.setViewportSize({ width: size.width, height: size.height });
    const overflow = (await page.evaluate("document.documentElement.scrollWidth - window.innerWidth")) as number;
    if (overflow > 0) throw new Error(`${name} at ${size.name} is ${overflow} px wider than the window`);
    const file = path.join(SCREENSHOTS, `${name}-${size.name}.png`);
    await page.screenshot({ path: file, fullPage: true });
    files.push(file);
  }
  return files;
}

/**
 * Every console error and uncaught exception of a page. Chromium logs each 4xx answer as a console error
 * ("Failed to load resource"); a test that provokes one on purpose says so with `expect`, and only those are allowed.
 */
export function watchConsole(page: Page) {
  const errors: string[] = [];
  const expected: RegExp[] = [];
  page.on("console", (message: ConsoleMessage) => {
    if (message.type() !== "error") return;
    const text = `${message.text()} (${message.location().url})`;
    const index = expected.findIndex((pattern) => pattern.test(text));
    if (index >= 0) expected.splice(index, 1);
    else errors.push(text);
  });
  page.on("pageerror", (error) => errors.push(`uncaught: ${error.message}`));
  return {
    errors,
    /** One console error matching `pattern` is the point of the next step. */
    expect: (pattern: RegExp) => expected.push(pattern),
  };
}
