import { write } from "node:fs";

/** Lines beyond this much unwritten output are dropped, not held: a reader that stalls must not exhaust memory. */
const MAX_PENDING_BYTES = 16 * 1024 * 1024;
/** A full non-blocking pipe is tried again after this long, from a timer: never by sleeping on the main thread. */
const FULL_PIPE_RETRY_MS = 20;

/**
 * Where the service's log lines go (stdout, as JSON lines or through pino-pretty). Used instead of pino's default
 * destination (sonic-boom 4.2.1) because of how that one ends: pino registers a flush on the process's `exit` event,
 * and sonic-boom's `flushSync` retries a failed write for ever, sleeping in `Atomics.wait` between tries. When the
 * reader of stdout has gone (the process that started the service exited, `npm start | tee` was stopped, a container
 * runtime or the journal restarted), every try fails with EPIPE or ECONNRESET and `process.exit` never returns.
 *
 * Here every write is asynchronous, one at a time, and nothing runs at exit: the first write error other than a full
 * pipe marks the destination gone, and every later line is dropped. Stopping waits for the lines written so far with
 * `flush`, which has a bound of its own.
 */
export class LogDestination {
  private queue: Buffer[] = [];
  private queuedBytes = 0;
  private writing = false;
  private waiting: (() => void)[] = [];
  /** The error that ended writing, once the destination has gone. */
  failure: NodeJS.ErrnoException | undefined;
  /** Lines dropped: after the destination failed, or past MAX_PENDING_BYTES. */
  dropped = 0;

  constructor(private readonly fd: number) {}

  /** pino calls this with each line, newline included. */
  write(line: string): void {
    const bytes = Buffer.from(line);
    if (this.failure || this.queuedBytes + bytes.length > MAX_PENDING_BYTES) {
      this.dropped++;
      return;
    }
    this.queue.push(bytes);
    this.queuedBytes += bytes.length;
    if (!this.writing) this.writeQueued();
  }

  /** Resolves once every line written so far is out (or dropped), or after `timeoutMs`, whichever comes first. */
  flush(timeoutMs: number): Promise<void> {
    if (!this.writing) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.waiting.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private writeQueued(): void {
    const chunk = this.queue.length === 1 ? (this.queue[0] as Buffer) : Buffer.concat(this.queue);
    this.queue = [];
    this.writing = true;
    write(this.fd, chunk, 0, chunk.length, null, (error, written) => {
      if (error && error.code === "EAGAIN") {
        this.queue.unshift(chunk);
        setTimeout(() => this.writeQueued(), FULL_PIPE_RETRY_MS);
        return;
      }
      if (error) {
        this.failure = error;
        this.dropped += this.queue.length + 1;
        this.queue = [];
        this.queuedBytes = 0;
      } else {
        this.queuedBytes -= written;
        if (written < chunk.length) this.queue.unshift(chunk.subarray(written));
      }
      if (this.queue.length > 0) return this.writeQueued();
      this.writing = false;
      for (const done of this.waiting.splice(0)) done();
    });
  }
}
