import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  type AddressKind,
  checkUrl,
  classifyAddress,
  isSelf,
  type Lookup,
  refusalFor,
} from "../../src/webhooks/addressGuard";

const TABLE: [string, AddressKind][] = [
  // IPv4
  ["8.8.8.8", "public"],
  ["1.1.1.1", "public"],
  ["93.184.216.34", "public"],
  ["0.0.0.0", "unspecified"],
  ["0.255.255.255", "unspecified"],
  ["10.0.0.5", "private"],
  ["10.255.255.255", "private"],
  ["11.0.0.1", "public"],
  ["100.63.255.255", "public"],
  ["100.64.0.1", "shared"],
  ["100.127.255.255", "shared"],
  ["100.128.0.0", "public"],
  ["127.0.0.1", "loopback"],
  ["127.255.255.254", "loopback"],
  ["169.254.169.254", "link-local"],
  ["172.15.255.255", "public"],
  ["172.16.0.1", "private"],
  ["172.31.255.255", "private"],
  ["172.32.0.0", "public"],
  ["192.0.0.8", "reserved"],
  ["192.0.2.1", "documentation"],
  ["192.88.99.1", "reserved"],
  ["192.167.255.255", "public"],
  ["192.168.1.1", "private"],
  ["192.169.0.0", "public"],
  ["198.18.0.1", "benchmarking"],
  ["198.19.255.255", "benchmarking"],
  ["198.51.100.7", "documentation"],
  ["203.0.113.9", "documentation"],
  ["224.0.0.1", "multicast"],
  ["239.255.255.255", "multicast"],
  ["240.0.0.1", "reserved"],
  ["255.255.255.255", "broadcast"],
  // IPv6
  ["::", "unspecified"],
  ["::1", "loopback"],
  ["[::1]", "loopback"],
  ["0:0:0:0:0:0:0:1", "loopback"],
  ["2606:4700:4700::1111", "public"],
  ["2001:4860:4860::8888", "public"],
  ["fe80::1", "link-local"],
  ["fe80::1%eth0", "link-local"],
  ["febf:ffff::1", "link-local"],
  ["fec0::1", "site-local"],
  ["fc00::1", "unique-local"],
  ["fd12:3456:789a::1", "unique-local"],
  ["ff02::1", "multicast"],
  ["2001:db8::1", "documentation"],
  ["2001::1", "reserved"],
  ["100::1", "reserved"],
  ["::2", "reserved"],
  ["4000::1", "reserved"],
  // IPv4 inside IPv6: the IPv4 address decides
  ["::ffff:127.0.0.1", "loopback"],
  ["::ffff:7f00:1", "loopback"],
  ["::ffff:10.1.2.3", "private"],
  ["::ffff:169.254.169.254", "link-local"],
  ["::ffff:8.8.8.8", "public"],
  ["64:ff9b::10.0.0.1", "private"],
  ["64:ff9b::8.8.8.8", "public"],
  ["64:ff9b:1::1", "private"],
  ["2002:7f00:1::1", "loopback"],
  ["2002:0808:0808::1", "public"],
  ["::127.0.0.1", "reserved"],
];

describe("classification", () => {
  for (const [ip, kind] of TABLE) {
    test(`${ip} is ${kind}`, () => assert.equal(classifyAddress(ip), kind));
  }

  test("anything that is not an IP address has no kind", () => {
    for (const text of ["localhost", "example.com", "1.2.3", "1.2.3.4.5", "::g", "", "256.1.1.1"]) {
      assert.equal(classifyAddress(text), undefined, text);
    }
  });
});

describe("policy", () => {
  const strict = { allowPrivate: false };
  const development = { allowPrivate: true };

  test("public addresses pass; local ones only when allowed; the rest never", () => {
    assert.equal(refusalFor("8.8.8.8", 443, strict), undefined);
    assert.equal(refusalFor("10.0.0.5", 443, strict), "10.0.0.5, a private address");
    assert.equal(refusalFor("127.0.0.1", 80, strict), "127.0.0.1, a loopback address");
    assert.equal(refusalFor("169.254.169.254", 80, strict), "169.254.169.254, a link-local address");
    assert.equal(refusalFor("::ffff:192.168.0.1", 80, strict), "::ffff:192.168.0.1, a private address");
    for (const ip of ["10.0.0.5", "127.0.0.1", "::1", "169.254.1.1", "fe80::1", "fd00::1", "100.64.0.1"]) {
      assert.equal(refusalFor(ip, 80, development), undefined, ip);
    }
    for (const ip of ["0.0.0.0", "::", "224.0.0.1", "ff02::1", "255.255.255.255", "240.0.0.1", "192.0.2.1"]) {
      assert.ok(refusalFor(ip, 80, development), `${ip} is refused even in development`);
    }
  });

  test("the service itself: its address and port, loopback on its port, any local address when bound to all", () => {
    const self = [{ address: "127.0.0.1", port: 3000 }];
    assert.equal(isSelf("127.0.0.1", 3000, self), true);
    assert.equal(isSelf("::ffff:127.0.0.1", 3000, self), true);
    assert.equal(isSelf("127.0.0.2", 3000, self), true, "any loopback address on the service's port");
    assert.equal(isSelf("::1", 3000, self), true);
    assert.equal(isSelf("127.0.0.1", 3001, self), false, "another port is another server");
    assert.equal(isSelf("8.8.8.8", 3000, self), false);
    assert.equal(isSelf("203.0.113.5", 8080, [{ address: "203.0.113.5", port: 8080 }]), true);
    assert.equal(isSelf("127.0.0.1", 8080, [{ address: "0.0.0.0", port: 8080 }]), true);
    assert.equal(isSelf("127.0.0.1", 8080, ["/tmp/service.sock"]), false);
    const policy = { allowPrivate: true, self: () => self };
    assert.equal(refusalFor("127.0.0.1", 3000, policy), "127.0.0.1 port 3000, this service itself");
    assert.equal(refusalFor("127.0.0.1", 3001, policy), undefined);
  });
});

describe("checkUrl: resolution, then every address", () => {
  const fakeDns =
    (answers: Record<string, string[]>): Lookup =>
    async (hostname) => {
      const addresses = answers[hostname];
      if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
      return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
    };
  const lookup = fakeDns({
    "hooks.example.com": ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"],
    "internal.example.com": ["10.0.0.5"],
    "mixed.example.com": ["93.184.216.34", "192.168.1.20"],
    "metadata.example.com": ["::ffff:169.254.169.254"],
  });
  const strict = { allowPrivate: false };

  test("a public name passes with every address it resolves to", async () => {
    const result = await checkUrl(new URL("https://hooks.example.com/verify"), strict, { lookup });
    assert.deepEqual(result, {
      ok: true,
      addresses: [
        { address: "93.184.216.34", family: 4 },
        { address: "2606:2800:220:1:248:1893:25c8:1946", family: 6 },
      ],
    });
  });

  test("names resolving to a blocked range are refused, naming the address; one bad address is enough", async () => {
    for (const [url, reason] of [
      ["https://internal.example.com/", "resolves to 10.0.0.5, a private address"],
      ["https://mixed.example.com/", "resolves to 192.168.1.20, a private address"],
      ["http://metadata.example.com/", "resolves to ::ffff:169.254.169.254, a link-local address"],
    ]) {
      assert.deepEqual(await checkUrl(new URL(url as string), strict, { lookup }), { ok: false, reason }, url);
    }
  });

  test("localhost, through the system resolver, is loopback", async () => {
    const result = await checkUrl(new URL("http://localhost:8080/hook"), strict);
    assert.equal(result.ok, false);
    assert.match((result as { reason: string }).reason, /^resolves to (127\.0\.0\.1|::1), a loopback address$/);
    assert.equal((await checkUrl(new URL("http://localhost:8080/hook"), { allowPrivate: true })).ok, true);
  });

  test("IP literals, however the URL spells them, are checked without DNS", async () => {
    const noDns: Lookup = async () => assert.fail("no lookup for a literal");
    for (const [url, reason] of [
      ["http://127.0.0.1/", "is 127.0.0.1, a loopback address"],
      ["http://2130706433/", "is 127.0.0.1, a loopback address"],
      ["http://0x7f.1/", "is 127.0.0.1, a loopback address"],
      ["http://[::1]:8080/", "is ::1, a loopback address"],
      ["http://[::ffff:10.0.0.1]/", "is ::ffff:a00:1, a private address"],
      ["http://0.0.0.0:80/", "is 0.0.0.0, an unspecified address"],
    ]) {
      assert.deepEqual(await checkUrl(new URL(url as string), strict, { lookup: noDns }), { ok: false, reason }, url);
    }
    const open = await checkUrl(new URL("http://8.8.8.8/"), strict, { lookup: noDns });
    assert.deepEqual(open, { ok: true, addresses: [{ address: "8.8.8.8", family: 4 }] });
  });

  test("a name that does not resolve is reported as unresolved", async () => {
    const result = await checkUrl(new URL("https://nowhere.example.com/"), strict, { lookup });
    assert.deepEqual(result, {
      ok: false,
      reason: "host nowhere.example.com does not resolve (ENOTFOUND)",
      unresolved: true,
      dnsCode: "ENOTFOUND",
    });
  });

  test("a lookup that hangs ends when the signal aborts", async () => {
    const hanging: Lookup = () => new Promise(() => {});
    const started = performance.now();
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    await assert.rejects(
      checkUrl(new URL("https://slow-dns.example.com/"), strict, { lookup: hanging, signal: controller.signal }),
    );
    assert.ok(performance.now() - started < 500);
  });

  test("the service's own port on loopback is refused even when loopback is allowed", async () => {
    const policy = { allowPrivate: true, self: () => [{ address: "127.0.0.1", port: 4321 }] };
    assert.deepEqual(await checkUrl(new URL("http://localhost:4321/api"), policy), {
      ok: false,
      reason: "resolves to 127.0.0.1 port 4321, this service itself",
    });
    assert.equal((await checkUrl(new URL("http://127.0.0.1:4322/"), policy)).ok, true);
  });
});
