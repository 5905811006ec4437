// The one app a test file works on (startTestApp: its own database), with one dApp made on it, started before the
// file's tests and closed after them: for files whose tests all act as that dApp or against its keys. Each accessor
// fails the test that calls it with a clear message when the start failed.
import assert from "node:assert/strict";
import { after, before } from "node:test";
import { type Dapp, startTestApp, type TestApp } from "./app";

export function appWithDapp(): { t(): TestApp; dapp(): Dapp } {
  let t: TestApp | undefined;
  let dapp: Dapp | undefined;
  before(async () => {
    t = await startTestApp();
    dapp = await t.dapp();
  });
  after(() => t?.close());
  return {
    t: () => {
      assert.ok(t, "the app did not start");
      return t;
    },
    dapp: () => {
      assert.ok(dapp, "the file's dApp was not made");
      return dapp;
    },
  };
}
