import type { LookupAddress } from "node:dns";
import { lookup as dnsLookup } from "node:dns/promises";
import { isIPv4, isIPv6 } from "node:net";
import { networkInterfaces } from "node:os";

/**
 * What kind of address an IP is, for deciding whether the service may call it. `public` is the only kind a production
 * service calls; the local kinds (`LOCAL_KINDS`) are allowed only when the configuration says so; the rest are never
 * a web server (unspecified, multicast, broadcast, reserved, documentation).
 */
export type AddressKind =
  | "public"
  | "private"
  | "loopback"
  | "link-local"
  | "unique-local"
  | "site-local"
  | "shared"
  | "benchmarking"
  | "unspecified"
  | "multicast"
  | "broadcast"
  | "reserved"
  | "documentation";

/** Kinds that reach this machine or its own networks: allowed only with `allowPrivate` (development, tests). */
const LOCAL_KINDS: ReadonlySet<AddressKind> = new Set([
  "private",
  "loopback",
  "link-local",
  "unique-local",
  "site-local",
  "shared",
  "benchmarking",
]);

const DESCRIPTIONS: Record<AddressKind, string> = {
  public: "a public address",
  private: "a private address",
  loopback: "a loopback address",
  "link-local": "a link-local address",
  "unique-local": "a unique-local address",
  "site-local": "a site-local address",
  shared: "a shared (carrier-grade NAT) address",
  benchmarking: "a benchmarking address",
  unspecified: "an unspecified address",
  multicast: "a multicast address",
  broadcast: "the broadcast address",
  reserved: "a reserved address",
  documentation: "a documentation address",
};

/** IPv4 special-purpose ranges (RFC 6890 and successors): [first address, prefix length, kind]. Most specific first. */
const V4_RANGES: readonly [string, number, AddressKind][] = [
  ["255.255.255.255", 32, "broadcast"],
  ["0.0.0.0", 8, "unspecified"],
  ["10.0.0.0", 8, "private"],
  ["100.64.0.0", 10, "shared"],
  ["127.0.0.0", 8, "loopback"],
  ["169.254.0.0", 16, "link-local"],
  ["172.16.0.0", 12, "private"],
  ["192.0.0.0", 24, "reserved"],
  ["192.0.2.0", 24, "documentation"],
  ["192.88.99.0", 24, "reserved"],
  ["192.168.0.0", 16, "private"],
  ["198.18.0.0", 15, "benchmarking"],
  ["198.51.100.0", 24, "documentation"],
  ["203.0.113.0", 24, "documentation"],
  ["224.0.0.0", 4, "multicast"],
  ["240.0.0.0", 4, "reserved"],
];

/** IPv6 ranges decided without looking at an embedded IPv4 address. Anything outside 2000::/3 is reserved. */
const V6_RANGES: readonly [string, number, AddressKind][] = [
  ["::", 128, "unspecified"],
  ["::1", 128, "loopback"],
  ["64:ff9b:1::", 48, "private"],
  ["100::", 64, "reserved"],
  ["2001::", 32, "reserved"],
  ["2001:2::", 48, "benchmarking"],
  ["2001:db8::", 32, "documentation"],
  ["fc00::", 7, "unique-local"],
  ["fe80::", 10, "link-local"],
  ["fec0::", 10, "site-local"],
  ["ff00::", 8, "multicast"],
];

function parseV4(text: string): number {
  return text.split(".").reduce((value, part) => value * 256 + Number(part), 0);
}

/** The 128-bit value of an IPv6 address in text (zone id dropped, a dotted IPv4 tail allowed); assumes `isIPv6`. */
function parseV6(text: string): bigint {
  let address = text.split("%")[0] as string;
  const dotted = address.lastIndexOf(".");
  if (dotted !== -1) {
    const colon = address.lastIndexOf(":");
    const v4 = parseV4(address.slice(colon + 1));
    address = `${address.slice(0, colon + 1)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const [head, tail] = address.split("::") as [string, string | undefined];
  const groups = (part: string | undefined) => (part ? part.split(":") : []);
  const left = groups(head);
  const right = groups(tail);
  const all = tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill("0"), ...right];
  return all.reduce((value, group) => (value << 16n) | BigInt(Number.parseInt(group, 16)), 0n);
}

const V4_TABLE = V4_RANGES.map(([base, bits, kind]) => ({ base: parseV4(base), bits, kind }));
const V6_TABLE = V6_RANGES.map(([base, bits, kind]) => ({ base: parseV6(base), bits, kind }));

function classifyV4(value: number): AddressKind {
  for (const { base, bits, kind } of V4_TABLE) {
    // Division instead of bit shifts: JavaScript shifts are signed 32-bit.
    const size = 2 ** (32 - bits);
    if (Math.floor(value / size) === Math.floor(base / size)) return kind;
  }
  return "public";
}

const inV6 = (value: bigint, base: bigint, bits: number) => value >> BigInt(128 - bits) === base >> BigInt(128 - bits);
const low32 = (value: bigint) => Number(value & 0xffffffffn);

function classifyV6(value: bigint): AddressKind {
  // IPv4-mapped (::ffff:a.b.c.d) and NAT64 (64:ff9b::a.b.c.d) addresses reach the IPv4 address they carry.
  if (inV6(value, 0xffffn << 32n, 96) || inV6(value, 0x64ff9bn << 96n, 96)) return classifyV4(low32(value));
  // 6to4 (2002:a.b.c.d::/48) tunnels to the IPv4 address in bits 16 to 48.
  if (inV6(value, 0x2002n << 112n, 16)) return classifyV4(Number((value >> 80n) & 0xffffffffn));
  for (const { base, bits, kind } of V6_TABLE) if (inV6(value, base, bits)) return kind;
  return inV6(value, 0x2000n << 112n, 3) ? "public" : "reserved";
}

/** The kind of an IP address in text (IPv4, IPv6, IPv4-mapped IPv6); undefined for anything that is not an IP. */
export function classifyAddress(ip: string): AddressKind | undefined {
  const address = unbracket(ip);
  if (isIPv4(address)) return classifyV4(parseV4(address));
  if (isIPv6(address)) return classifyV6(parseV6(address));
  return undefined;
}

const describeKind = (kind: AddressKind): string => DESCRIPTIONS[kind];

/** One spelling per address: IPv4-mapped IPv6 is its IPv4 address; used to compare addresses. */
function canonical(ip: string): string | undefined {
  const address = unbracket(ip);
  if (isIPv4(address)) return `4:${parseV4(address)}`;
  if (!isIPv6(address)) return undefined;
  const value = parseV6(address);
  return inV6(value, 0xffffn << 32n, 96) ? `4:${low32(value)}` : `6:${value}`;
}

/** URL hostnames write IPv6 literals in brackets. */
const unbracket = (host: string) => (host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host);

/** An address the service listens on, as `server.address()` gives it (a string is a Unix socket: never a URL). */
export type ListenAddress = { address: string; port: number } | string;

/** What the guard allows: local ranges only when configured, and never the service itself. */
export interface GuardPolicy {
  allowPrivate: boolean;
  /** Where the service listens, when it does (read at every check: the port is known only after listen). */
  self?: () => readonly ListenAddress[];
}

/**
 * Whether ip:port is this service: its listen address, loopback on its port, or (listening on every interface) any
 * address of this machine on its port.
 */
export function isSelf(ip: string, port: number, self: readonly ListenAddress[]): boolean {
  const target = canonical(ip);
  if (target === undefined) return false;
  for (const listen of self) {
    if (typeof listen === "string" || listen.port !== port) continue;
    if (classifyAddress(ip) === "loopback" || canonical(listen.address) === target) return true;
    if (classifyAddress(listen.address) === "unspecified" && localAddresses().has(target)) return true;
  }
  return false;
}

function localAddresses(): Set<string> {
  const addresses = new Set<string>();
  for (const list of Object.values(networkInterfaces())) {
    for (const entry of list ?? []) {
      const key = canonical(entry.address);
      if (key) addresses.add(key);
    }
  }
  return addresses;
}

/** Why one resolved address may not be called, or undefined when it may. */
export function refusalFor(ip: string, port: number, policy: GuardPolicy): string | undefined {
  const kind = classifyAddress(ip);
  if (kind === undefined) return `${ip}, which is not an IP address`;
  if (policy.self && isSelf(ip, port, policy.self())) return `${ip} port ${port}, this service itself`;
  if (kind === "public" || (policy.allowPrivate && LOCAL_KINDS.has(kind))) return undefined;
  return `${ip}, ${describeKind(kind)}`;
}

/** `dns.promises.lookup` with `all: true`, or a stand-in (tests). */
export type Lookup = (hostname: string) => Promise<LookupAddress[]>;

const systemLookup: Lookup = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/**
 * The outcome of a check: the addresses to connect to, or why not (`unresolved` when DNS gave no address, with the
 * error code of the lookup when it failed: ENOTFOUND for a name that does not exist, EAI_AGAIN when DNS did not answer).
 */
export type GuardResult =
  | { ok: true; addresses: LookupAddress[] }
  | { ok: false; reason: string; unresolved?: boolean; dnsCode?: string };

export const defaultPort = (url: URL) => (url.port ? Number(url.port) : url.protocol === "https:" ? 443 : 80);

/**
 * Resolves the URL's host and checks every address it resolves to (one bad address refuses: the connection could go
 * to any of them). An IP literal is checked as it is. Reasons read after the URL: "resolves to 10.0.0.5, a private
 * address". The lookup stops waiting when `signal` aborts.
 */
export async function checkUrl(
  url: URL,
  policy: GuardPolicy,
  options: { lookup?: Lookup; signal?: AbortSignal } = {},
): Promise<GuardResult> {
  const host = unbracket(url.hostname);
  const port = defaultPort(url);
  if (isIPv4(host) || isIPv6(host)) {
    const refusal = refusalFor(host, port, policy);
    return refusal ? { ok: false, reason: `is ${refusal}` } : { ok: true, addresses: [literal(host)] };
  }
  let addresses: LookupAddress[];
  try {
    addresses = await abortable((options.lookup ?? systemLookup)(host), options.signal);
  } catch (error) {
    if (options.signal?.aborted) throw error;
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    return { ok: false, reason: `host ${host} does not resolve (${code})`, unresolved: true, dnsCode: code };
  }
  if (addresses.length === 0) return { ok: false, reason: `host ${host} does not resolve`, unresolved: true };
  for (const { address } of addresses) {
    const refusal = refusalFor(address, port, policy);
    if (refusal) return { ok: false, reason: `resolves to ${refusal}` };
  }
  return { ok: true, addresses };
}

const literal = (host: string): LookupAddress => ({ address: host, family: isIPv4(host) ? 4 : 6 });

/** Rejects with the signal's reason as soon as it aborts; the work itself (a getaddrinfo) cannot be cancelled. */
function abortable<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}
