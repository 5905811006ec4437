import { Worker } from "node:worker_threads";

/**
 * Kills this process with SIGKILL after `ms`, from a worker thread. The shutdown's own deadline is a timer of the main
 * thread, so it cannot fire while that thread is stuck: in a synchronous write to a pipe nobody reads, in an exit
 * handler that sleeps in `Atomics.wait` (sonic-boom's flushSync did, for ever), in a tight loop. A worker has its own
 * thread and event loop, and a signal sent with `process.kill` from there ends the process whatever the main thread is
 * doing. Started when a stop begins; it is unref'd, so a stop that finishes in time exits without waiting for it.
 *
 * The worker is plain JavaScript given as text, so it runs the same from source (tsx) and from dist/, without a loader.
 */
export function startShutdownWatchdog(ms: number): Worker {
  const worker = new Worker(WATCHDOG_SOURCE, {
    eval: true,
    workerData: { pid: process.pid, ms },
    // Neither tsx nor the service's flags: the worker needs nothing but a timer.
    execArgv: [],
  });
  worker.unref();
  return worker;
}

// The message goes out with an asynchronous write, so that a stderr nobody reads cannot hold the kill back; it is sent
// a moment later whether or not the write has finished.
const WATCHDOG_SOURCE = `
const { workerData } = require("node:worker_threads");
const { write } = require("node:fs");
setTimeout(() => {
  const line = JSON.stringify({ level: 60, time: Date.now(), pid: workerData.pid,
    msg: "shutdown still not finished " + workerData.ms + " ms after the signal: the watchdog kills the process (SIGKILL)" });
  const kill = () => process.kill(workerData.pid, "SIGKILL");
  write(2, line + "\\n", kill);
  setTimeout(kill, 100);
}, workerData.ms);
`;
