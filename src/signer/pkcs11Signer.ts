// The verifying signer whose key stays in a PKCS#11 token (an HSM, a cloud HSM's client library, SoftHSM2): the
// service asks the token for a raw ECDSA signature of the EIP-191 digest and turns it into the r ‖ s ‖ v the contracts
// accept (ethereumSignature.ts). No copy of the key exists outside the token.
//
// A PKCS#11 session runs one operation at a time, so the signer keeps a pool of sessions open (SIGNER_PKCS11_SESSIONS)
// and lends one to each signature; the signature itself runs on a libuv thread (C_SignAsync), so a slow network HSM
// holds a thread, not the event loop. A module that drops its sessions (an HSM restart, a network cut, a token
// reinserted; closing every session also logs the application out) is met by opening the pool again, logging in
// again and retrying the signature once.
import { inspect } from "node:util";
import type { Address, Hex } from "viem";
import { publicKeyToAddress } from "viem/accounts";
import type { Pkcs11SignerConfig } from "../config";
import { ethereumSignature } from "./ethereumSignature";
import { findKey, type Handle, type OpenedToken, openToken, pkcs11ErrorName } from "./pkcs11Token";
import { checkHash, personalSignDigest, type Signer } from "./signer";

/** Return values after which the session (or the login it carried) is gone and a new one may succeed. */
const SESSION_LOST = new Set([
  "CKR_SESSION_HANDLE_INVALID",
  "CKR_SESSION_CLOSED",
  "CKR_USER_NOT_LOGGED_IN",
  "CKR_DEVICE_REMOVED",
  "CKR_DEVICE_ERROR",
  "CKR_TOKEN_NOT_PRESENT",
  "CKR_KEY_HANDLE_INVALID",
  "CKR_OBJECT_HANDLE_INVALID",
]);

/** A session lent to one signature, and the pool it belongs to (a reopening makes a new one). */
interface Lease {
  session: Handle;
  pool: ReadonlySet<Handle>;
}

export class Pkcs11Signer implements Signer {
  readonly kind = "pkcs11";
  readonly address: Address;
  /** Whether the token would let the key out: works, but worth a warning at start. */
  readonly extractable: boolean;
  readonly #token: OpenedToken;
  readonly #config: Pkcs11SignerConfig;
  #key: Handle;
  /** The pool's sessions; one lent out before a reopening is not in it any more, and is not put back. */
  #pool = new Set<Handle>();
  /** Sessions not lent out, and the signatures waiting for one. */
  #idle: Handle[] = [];
  #waiting: { resolve: (lease: Lease) => void; reject: (error: Error) => void }[] = [];
  #reopening: Promise<void> | undefined;
  #closed = false;
  #opened = 0;

  private constructor(token: OpenedToken, config: Pkcs11SignerConfig) {
    this.#token = token;
    this.#config = config;
    this.#key = token.key;
    this.address = publicKeyToAddress(`0x${Buffer.from(token.publicKey).toString("hex")}`);
    this.extractable = token.extractable;
  }

  /** Opens the token and the pool; throws a ConfigError naming the setting when the module, token, key or PIN is wrong. */
  static open(config: Pkcs11SignerConfig): Pkcs11Signer {
    const signer = new Pkcs11Signer(openToken(config), config);
    try {
      signer.#opened = 1;
      signer.#fill([signer.#token.session, ...signer.#openSessions(config.sessions - 1)]);
    } catch (error) {
      signer.close();
      throw error;
    }
    return signer;
  }

  async signHash(hash: Hex): Promise<Hex> {
    checkHash(hash);
    const digest = personalSignDigest(hash);
    for (let attempt = 1; ; attempt++) {
      const lease = await this.#acquire();
      let lost = false;
      try {
        const { module, binding } = this.#token;
        module.C_SignInit(lease.session, { mechanism: binding.CKM_ECDSA }, this.#key);
        const rs = await module.C_SignAsync(lease.session, Buffer.from(digest), Buffer.alloc(64));
        return await ethereumSignature(rs, digest, this.#token.publicKey);
      } catch (error) {
        lost = SESSION_LOST.has(pkcs11ErrorName(error));
        if (!lost || attempt > 1 || this.#closed) throw error;
        // The first signature to find its pool dropped opens it again; one whose pool was replaced meanwhile (it
        // failed with the same drop) waits for that and retries, rather than dropping the new pool in turn.
        if (lease.pool === this.#pool) await this.#reopen();
        else await this.#reopening;
      } finally {
        // A lost session is not lent again, nor one of a pool already replaced.
        if (!lost && lease.pool === this.#pool) this.#release(lease.session);
      }
    }
  }

  async #acquire(): Promise<Lease> {
    if (this.#closed) throw new Error("the PKCS#11 signer is closed");
    // No pool: being opened again, or the last try failed (the HSM still away), in which case this one tries anew.
    if (this.#pool.size === 0) await (this.#reopening ?? this.#reopen());
    const session = this.#idle.pop();
    if (session !== undefined) return { session, pool: this.#pool };
    return new Promise((resolve, reject) => this.#waiting.push({ resolve, reject }));
  }

  /** Lends `session` (of the current pool) to the first signature waiting, or keeps it for the next. */
  #release(session: Handle): void {
    const next = this.#waiting.shift();
    if (next) next.resolve({ session, pool: this.#pool });
    else this.#idle.push(session);
  }

  /** Makes `sessions` the pool; signatures waiting for a session of the old one get one of these. */
  #fill(sessions: Handle[]): void {
    this.#pool = new Set(sessions);
    this.#idle = [];
    for (const session of sessions) this.#release(session);
  }

  #openSessions(count: number): Handle[] {
    const { module, binding, slot } = this.#token;
    this.#opened += count;
    return Array.from({ length: count }, () => module.C_OpenSession(slot, binding.CKF_SERIAL_SESSION));
  }

  /**
   * Closes what is left of the pool, opens it again, logs in again and finds the key again (handles may change with
   * the sessions). Signatures that fail together share one reopening.
   */
  #reopen(): Promise<void> {
    this.#reopening ??= (async () => {
      const { module, binding, slot, pin } = this.#token;
      // Nothing of the dropped pool is lent any more; signatures asking meanwhile wait for the new one.
      this.#pool = new Set();
      this.#idle = [];
      try {
        module.C_CloseAllSessions(slot);
      } catch {
        // already gone
      }
      const sessions = this.#openSessions(this.#config.sessions);
      try {
        module.C_Login(sessions[0] as Handle, binding.CKU_USER, pin.reveal());
      } catch (error) {
        if (pkcs11ErrorName(error) !== "CKR_USER_ALREADY_LOGGED_IN") throw error;
      }
      this.#key = findKey(binding, module, sessions[0] as Handle, this.#config).key;
      this.#fill(sessions);
    })()
      .catch((error) => {
        // Signatures waiting for the new pool fail with the module's answer instead of waiting for ever.
        for (const { reject } of this.#waiting.splice(0)) reject(error);
        throw error;
      })
      .finally(() => {
        this.#reopening = undefined;
      });
    return this.#reopening;
  }

  /** Closes the sessions and releases the module; signatures asked afterwards fail. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    const { module, slot } = this.#token;
    for (const step of [() => module.C_CloseAllSessions(slot), () => module.C_Finalize()]) {
      try {
        step();
      } catch {
        // the module dropped them already
      }
    }
    for (const { reject } of this.#waiting.splice(0)) reject(new Error("the PKCS#11 signer is closed"));
  }

  /** Sessions opened since the start: the pool's size, plus the pool's size again for each reopening. */
  get sessionsOpened(): number {
    return this.#opened;
  }

  toString(): string {
    return `Pkcs11Signer(${this.address}, token "${this.#config.tokenLabel}", key "${this.#config.keyLabel}")`;
  }
  toJSON(): { kind: "pkcs11"; address: Address } {
    return { kind: this.kind, address: this.address };
  }
  [inspect.custom](): string {
    return this.toString();
  }
}
