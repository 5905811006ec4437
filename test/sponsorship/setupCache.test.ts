import assert from "node:assert/strict";
import { test } from "node:test";
import type { SponsorshipSetup } from "../../src/sponsorship/setup";
import { SetupCache } from "../../src/sponsorship/setupCache";

/** A cache over a loader that counts its loads per apiKey and hands out a new object each time. */
function countingCache() {
  const loads = new Map<string, number>();
  const cache = new SetupCache(async (apiKey) => {
    loads.set(apiKey, (loads.get(apiKey) ?? 0) + 1);
    return { apiKey } as unknown as SponsorshipSetup;
  }, 60_000);
  return { cache, loads };
}

test("a cached setup is served without a new load until it is invalidated", async () => {
  const { cache, loads } = countingCache();
  const first = await cache.get("A", 0);
  assert.equal(await cache.get("A", 10), first);
  assert.equal(loads.get("A"), 1);
  cache.invalidate("A");
  const second = await cache.get("A", 20);
  assert.notEqual(second, first, "the next get loads the setup again");
  assert.equal(loads.get("A"), 2);
});

test("invalidating one paymaster leaves the others cached", async () => {
  const { cache, loads } = countingCache();
  const b = await cache.get("B", 0);
  await cache.get("A", 0);
  cache.invalidate("A");
  assert.equal(await cache.get("B", 10), b, "B's entry is the same object");
  assert.equal(loads.get("B"), 1);
  await cache.get("A", 10);
  assert.equal(loads.get("A"), 2);
});

test("invalidating an apiKey that is not cached changes nothing", async () => {
  const { cache, loads } = countingCache();
  const a = await cache.get("A", 0);
  cache.invalidate("unknown");
  assert.equal(await cache.get("A", 10), a);
  assert.equal(loads.get("A"), 1);
  assert.equal(loads.has("unknown"), false);
});

test("after the TTL a setup is kept while its version is unchanged and loaded again once it moves", async () => {
  let version: string | undefined = "1";
  let loads = 0;
  const cache = new SetupCache(
    async () => {
      loads++;
      return version === undefined ? undefined : ({ version } as unknown as SponsorshipSetup);
    },
    1000,
    undefined,
    async () => version,
  );
  const first = await cache.get("A", 0);
  assert.equal(await cache.get("A", 1500), first, "unchanged after the TTL: the same setup");
  assert.equal(loads, 1);
  version = "2";
  const second = await cache.get("A", 3000);
  assert.notEqual(second, first);
  assert.equal(second?.version, "2");
  assert.equal(loads, 2);
  version = undefined;
  assert.equal(await cache.get("A", 4500), undefined, "a paymaster gone is gone after the TTL");
  assert.equal(loads, 3);
});

test("a setup without a version (built by hand) is loaded again after every TTL", async () => {
  let loads = 0;
  const cache = new SetupCache(
    async () => {
      loads++;
      return {} as SponsorshipSetup;
    },
    1000,
    undefined,
    async () => undefined,
  );
  await cache.get("A", 0);
  await cache.get("A", 1500);
  assert.equal(loads, 2);
});
