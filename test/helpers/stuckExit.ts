// Run as a child process by tests: arms the shutdown watchdog for the milliseconds given as argument, then exits the
// way the service's stop hung, with the main thread asleep in Atomics.wait for ever inside an `exit` handler.
import { startShutdownWatchdog } from "../../src/shutdownWatchdog";

startShutdownWatchdog(Number(process.argv[2]));
process.on("exit", () => {
  const never = new Int32Array(new SharedArrayBuffer(4));
  for (;;) Atomics.wait(never, 0, 0, 100);
});
process.stdout.write("stuck\n", () => process.exit(0));
