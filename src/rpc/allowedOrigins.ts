import type { SponsorshipSetup } from "../sponsorship/setup";

/**
 * What a paymaster's origin settings make of one request: whether it may go on, and the Access-Control-Allow-Origin to
 * answer with (`*` while the paymaster lists no origin; the caller's own origin when listed; none when refused, so a
 * browser shows the page nothing).
 */
export type OriginVerdict =
  | { allowed: true; allowOrigin: string; varies: boolean }
  | { allowed: false; message: string; varies: true };

/** Longer Origin headers are quoted by their start only. */
const QUOTED = 120;

/**
 * A browser always sends Origin on a cross-site POST and on a preflight, and a page cannot forge it; servers and
 * bundlers send none. So an unlisted origin is another web page using the dApp's apiKey, and a call without one is a
 * server's, refused only when the paymaster requires an Origin. (A script outside a browser can send any Origin: this
 * keeps other web pages off the key, and the quotas bound what scripts can do.)
 */
export function originVerdict(setup: SponsorshipSetup, origin: string | undefined): OriginVerdict {
  const settings = setup.origins;
  if (!settings) return { allowed: true, allowOrigin: "*", varies: false };
  if (origin === undefined) {
    if (!settings.required) return { allowed: true, allowOrigin: "*", varies: settings.allowed.size > 0 };
    return {
      allowed: false,
      message: "Origin header required: this paymaster answers only browsers on its allowed origins (requireOrigin)",
      varies: true,
    };
  }
  if (settings.allowed.size === 0) return { allowed: true, allowOrigin: "*", varies: false };
  if (settings.allowed.has(origin.toLowerCase())) return { allowed: true, allowOrigin: origin, varies: true };
  return {
    allowed: false,
    message: `Origin ${JSON.stringify(origin.slice(0, QUOTED))} is not allowed to use this paymaster (allowedOrigins)`,
    varies: true,
  };
}
