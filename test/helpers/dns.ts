import type { Lookup } from "../../src/webhooks/addressGuard";

/** A DNS error as `dns.lookup` reports it. */
export const dnsError = (code: string, hostname: string) =>
  Object.assign(new Error(`getaddrinfo ${code} ${hostname}`), { code, hostname });

/**
 * The tests' DNS, so that no test depends on the machine's: names under example.com and .example are one public
 * address (never called: only registration looks them up), localhost is loopback, and every other name does not exist.
 */
export const testLookup: Lookup = async (hostname) => {
  const name = hostname.toLowerCase();
  if (name === "localhost") return [{ address: "127.0.0.1", family: 4 }];
  if (name === "example.com" || name.endsWith(".example.com") || name.endsWith(".example")) {
    return [{ address: "93.184.216.34", family: 4 }];
  }
  throw dnsError("ENOTFOUND", hostname);
};
