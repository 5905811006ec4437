import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { DEFAULT_FAILURE_THROTTLE, type FailureThrottleConfig } from "../config";
import { LIMIT_EXCEEDED, RpcError } from "../errors";

/** Addresses remembered at most; beyond it the oldest windows are dropped (memory stays bounded under a flood). */
const MAX_ADDRESSES = 100_000;

/**
 * Wrong credentials per client address, in fixed windows: an address that sent `maxFailures` wrong ones gets 429 on
 * every credentialed request until its window ends. Everything it sends is refused meanwhile, right credentials too:
 * if those still passed, "not 429" would tell a guesser which guess was right, and the throttle would stop nothing.
 */
export class FailureThrottle {
  readonly #windows = new Map<string, { failures: number; endsAt: number }>();

  constructor(
    private readonly config: FailureThrottleConfig = DEFAULT_FAILURE_THROTTLE,
    private readonly maxAddresses = MAX_ADDRESSES,
  ) {}

  /** Whole seconds until the address may try again, or undefined when it may now. */
  retryAfterSeconds(address: string, nowMs: number): number | undefined {
    const window = this.#windows.get(address);
    if (this.config.maxFailures === 0 || !window || window.endsAt <= nowMs) return undefined;
    return window.failures >= this.config.maxFailures ? Math.ceil((window.endsAt - nowMs) / 1000) : undefined;
  }

  recordFailure(address: string, nowMs: number): void {
    if (this.config.maxFailures === 0) return;
    const window = this.#windows.get(address);
    if (window && window.endsAt > nowMs) {
      window.failures += 1;
      return;
    }
    this.#windows.delete(address);
    this.#dropEnded(nowMs);
    this.#windows.set(address, { failures: 1, endsAt: nowMs + this.config.windowMs });
  }

  /** Every window is as long, and a Map keeps insertion order: the first windows are the first to end. */
  #dropEnded(nowMs: number): void {
    for (const [address, window] of this.#windows) {
      if (window.endsAt > nowMs && this.#windows.size < this.maxAddresses) return;
      this.#windows.delete(address);
    }
  }
}

const rejected = new WeakSet<FastifyRequest>();

/** Marks a request whose credential (authToken, apiKey) was presented and not accepted: it counts for its address. */
export function noteRejectedCredential(request: FastifyRequest): void {
  rejected.add(request);
}

const message = (seconds: number) =>
  `Too many requests with wrong credentials from this address: try again in ${seconds} s`;

/**
 * Installs the throttle on every credentialed request (`isCredentialed`): refused with 429 and Retry-After before any
 * work (no body parsing, no database) while its address is throttled; counted after the answer when its credential
 * was rejected. The management API answers in its envelope, the RPC endpoint with a JSON-RPC error.
 */
export function throttleFailures(
  app: FastifyInstance,
  options: {
    config?: FailureThrottleConfig;
    isCredentialed: (request: FastifyRequest) => boolean;
    isRpc: (request: FastifyRequest) => boolean;
    sendRpc: (reply: FastifyReply, error: RpcError) => FastifyReply;
    /** The service's clock (ms): when a window of failures ends. */
    now: () => number;
  },
): void {
  const throttle = new FailureThrottle(options.config);
  const { now } = options;
  // Callback hooks, not async ones: every request passes them, and an async hook costs each request a promise. The one
  // that answers sends and does not call `done`.
  app.addHook("onRequest", (request, reply, done) => {
    if (!options.isCredentialed(request)) return done();
    const seconds = throttle.retryAfterSeconds(request.ip, now());
    if (seconds === undefined) return done();
    reply.header("retry-after", String(seconds));
    if (options.isRpc(request)) options.sendRpc(reply, new RpcError(LIMIT_EXCEEDED, message(seconds), 429));
    else reply.status(429).send({ statusCode: 429, message: message(seconds) });
  });
  app.addHook("onResponse", (request, _reply, done) => {
    if (rejected.has(request)) throttle.recordFailure(request.ip, now());
    done();
  });
}
