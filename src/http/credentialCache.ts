import { type Account, findAccountByTokenHash, hashToken, type SignedInAccount } from "../storage/accounts";
import type { Database, Queryable } from "../storage/database";
import { findPaymasterByApiKey, type KeyedPaymaster, type Paymaster } from "../storage/paymasters";
import type { ChannelListener } from "../storage/pgListener";
import type { TokenUse } from "./tokenUse";

/** Entries kept per map; beyond it the least recently used goes. About 400 bytes each: 4 MB at most per map. */
const MAX_ENTRIES = 10_000;

/** What the management guard asks: who a token is, and which of that account's paymasters an apiKey names. */
export interface Credentials {
  account(token: string): Promise<SignedInAccount | undefined>;
  paymaster(account: Account, apiKey: string): Promise<Paymaster | undefined>;
  /** Drops what is kept about an account (its tokens or apiKeys changed). */
  forgetAccount(accountId: string): void;
}

/**
 * The accounts and paymasters that tokens and apiKeys named, kept in memory so that a known credential is checked
 * without a database round trip. Sound only while every change of those rows reaches it, so it keeps nothing unless it
 * listens: the database notifies every change by any writer (migration 15's triggers, channel CREDENTIALS_CHANNEL),
 * and this instance's own writes also call `forget…` before they answer. While the listener is down (PostgreSQL lost
 * its connection) every check reads the database, and the cache is emptied both when it goes down and when it comes
 * back, since notifications sent in between are lost.
 *
 * Tokens are kept by their SHA-256 (the form the database holds), never in clear. A credential that is not accepted is
 * never kept: each one goes to the database and to the failure throttle. A load that started before a change of any
 * credential is not kept either (an epoch counts the changes), so a reply read before a rotation cannot outlive it.
 *
 * What ends with time rather than with a write (a token's expiry, the grace period of an apiKey a rotation replaced)
 * is kept with its end and checked against the clock on every hit: no notification marks it.
 */
export class CredentialCache implements Credentials {
  readonly #accounts = new Map<string, SignedInAccount>();
  /** By apiKey alone (unique in the table); the owning account is checked on every hit. */
  readonly #paymasters = new Map<string, KeyedPaymaster>();
  readonly #accountChanged: ((accountId: string) => void)[] = [];
  #epoch = 0;
  #listening = false;
  #listener: ChannelListener | undefined;

  constructor(
    private readonly db: Queryable,
    /** The service's clock (ms): tokens and apiKeys past their expiry or grace are refused by it. */
    private readonly now: () => number,
    private readonly maxEntries = MAX_ENTRIES,
    /** Notes that a token was used (the token list's "last used"); absent: not noted. */
    private readonly tokenUse?: TokenUse,
  ) {}

  /** Also tells `listener` of each account whose credentials changed (the sponsorship setup cache follows apiKeys). */
  onAccountChanged(listener: (accountId: string) => void): void {
    this.#accountChanged.push(listener);
  }

  /** Starts following the database's notifications of changed credentials; until then nothing is kept. */
  async follow(db: Pick<Database, "listen">, channel: string): Promise<void> {
    this.#listener = await db.listen(channel, {
      notify: (accountId) => {
        this.forgetAccount(accountId);
        for (const listener of this.#accountChanged) listener(accountId);
      },
      up: () => this.#setListening(true),
      down: () => this.#setListening(false),
    });
  }

  async close(): Promise<void> {
    this.#setListening(false);
    await this.#listener?.close();
  }

  /** PostgreSQL's process id of the listening connection while it is up; undefined on PGlite. */
  get listenerPid(): number | undefined {
    return this.#listener?.backendPid;
  }

  /** Whether credentials are being kept (the listener is up). */
  get listening(): boolean {
    return this.#listening;
  }

  async account(token: string): Promise<SignedInAccount | undefined> {
    const key = hashToken(token);
    const nowMs = this.now();
    let account = this.#listening ? touch(this.#accounts, key) : undefined;
    if (account && account.token.expiresMs !== null && account.token.expiresMs <= nowMs) {
      this.#accounts.delete(key);
      account = undefined;
    }
    if (!account) {
      const epoch = this.#epoch;
      account = await findAccountByTokenHash(this.db, key, nowMs);
      if (account && this.#keeps(epoch)) keep(this.#accounts, key, account, this.maxEntries);
    }
    if (account) await this.tokenUse?.note(account.token.id);
    return account;
  }

  async paymaster(account: Account, apiKey: string): Promise<Paymaster | undefined> {
    const nowMs = this.now();
    const hit = this.#listening ? touch(this.#paymasters, apiKey) : undefined;
    if (hit && (hit.apiKeyUntilMs === null || hit.apiKeyUntilMs > nowMs)) {
      return hit.accountId === account.id ? hit : undefined;
    }
    if (hit) this.#paymasters.delete(apiKey);
    const epoch = this.#epoch;
    const paymaster = await findPaymasterByApiKey(this.db, account.id, apiKey, nowMs);
    if (paymaster && this.#keeps(epoch)) keep(this.#paymasters, apiKey, paymaster, this.maxEntries);
    return paymaster;
  }

  /** Drops everything kept about one account: its token and its paymasters. */
  forgetAccount(accountId: string): void {
    this.#epoch++;
    for (const [key, account] of this.#accounts) if (account.id === accountId) this.#accounts.delete(key);
    for (const [key, paymaster] of this.#paymasters)
      if (paymaster.accountId === accountId) this.#paymasters.delete(key);
  }

  /** Drops the paymaster an apiKey names (its fields changed). */
  forgetPaymaster(apiKey: string): void {
    this.#epoch++;
    this.#paymasters.delete(apiKey);
  }

  /** A load may be kept only if no change happened while it ran and changes are being heard. */
  #keeps(epoch: number): boolean {
    return this.#listening && epoch === this.#epoch;
  }

  #setListening(listening: boolean): void {
    this.#listening = listening;
    this.#epoch++;
    this.#accounts.clear();
    this.#paymasters.clear();
  }
}

/** A hit becomes the most recently used entry (a Map iterates in insertion order). */
function touch<V>(map: Map<string, V>, key: string): V | undefined {
  const value = map.get(key);
  if (value !== undefined) {
    map.delete(key);
    map.set(key, value);
  }
  return value;
}

function keep<V>(map: Map<string, V>, key: string, value: V, maxEntries: number): void {
  map.set(key, value);
  if (map.size > maxEntries) {
    const oldest = map.keys().next().value;
    if (oldest !== undefined) map.delete(oldest);
  }
}
