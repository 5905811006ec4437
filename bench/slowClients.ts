/**
 * Slow-client attack on the real service with its default limits: SOCKETS connections that each send a partial
 * request header and then one more byte every DRIP_MS, as in the attack that once held 1,000 sockets for ever. Prints,
 * every second, how many of them are still open, the service's resident memory, and how long an ordinary request
 * took meanwhile. Run: npx tsx bench/slowClients.ts [sockets]
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { embeddedEnv, startService } from "../test/helpers/service";

const SOCKETS = Number(process.argv[2] ?? 1000);
const DRIP_MS = 5000;
const SECONDS = 20;

const rssMb = (pid: number) => {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").match(/VmRSS:\s+(\d+) kB/);
  return line ? Math.round(Number(line[1]) / 1024) : Number.NaN;
};

const dataDir = mkdtempSync(path.join(tmpdir(), "paymaster-bench-slow-"));
const service = await startService(embeddedEnv(dataDir), 180_000);
const pid = service.process.pid as number;
const port = Number(new URL(service.baseUrl).port);
let open = 0;
const timers: NodeJS.Timeout[] = [];
for (let i = 0; i < SOCKETS; i++) {
  const socket = net.connect(port, "127.0.0.1");
  socket.on("error", () => {});
  socket.once("connect", () => {
    open += 1;
    socket.write("GET /api/v2/public/sdk/paymasterParameters HTTP/1.1\r\nHost: x\r\n");
    timers.push(setInterval(() => socket.writable && socket.write("X"), DRIP_MS));
  });
  socket.once("close", () => (open -= 1));
}
console.log(`service pid ${pid}, RSS ${rssMb(pid)} MB before; ${SOCKETS} dripping sockets opened`);
for (let second = 1; second <= SECONDS; second++) {
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const started = performance.now();
  const response = await fetch(`${service.baseUrl}/api/v2/public/sdk/paymasterParameters`);
  await response.arrayBuffer();
  const ms = Math.round(performance.now() - started);
  console.log(
    `${second} s: ${open} still open, RSS ${rssMb(pid)} MB, an ordinary request: ${response.status} in ${ms} ms`,
  );
}
for (const timer of timers) clearInterval(timer);
await service.stop();
rmSync(dataDir, { recursive: true, force: true });
