/**
 * Slow-client attack on the real service with its default limits: SOCKETS connections that each send a partial
 * request header and then one more byte every DRIP_MS. Prints, every second, how many are still open as the clients
 * see it and as the service holds them (its socket file descriptors: the truth, since some network stacks, gVisor's
 * among them, tell a client its connection was closed only when it next writes), the service's resident memory, and
 * how long an ordinary request took meanwhile. Run: npx tsx bench/slowClients.ts [sockets]
 */
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs";
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

/** Sockets the service process holds open, as its file descriptors show (the server's view, not the client's). */
const socketsHeld = (pid: number) =>
  readdirSync(`/proc/${pid}/fd`).filter((fd) => {
    try {
      return readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith("socket:");
    } catch {
      return false;
    }
  }).length;

const dataDir = mkdtempSync(path.join(tmpdir(), "paymaster-bench-slow-"));
const service = await startService(embeddedEnv(dataDir), 180_000);
const pid = service.process.pid as number;
const port = Number(new URL(service.baseUrl).port);
let open = 0;
const lifetimesMs: number[] = [];
const timers: NodeJS.Timeout[] = [];
// Opened 100 at a time: a burst of 1,000 overflows the listen backlog (511), and connections the kernel has not handed
// to the service yet are not the service's to close.
for (let i = 0; i < SOCKETS; i++) {
  if (i % 100 === 0) await new Promise((resolve) => setTimeout(resolve, 100));
  const socket = net.connect(port, "127.0.0.1");
  socket.on("error", () => {});
  socket.once("connect", () => {
    open += 1;
    const connectedAt = performance.now();
    socket.once("close", () => {
      open -= 1;
      lifetimesMs.push(performance.now() - connectedAt);
    });
    socket.write("GET /api/v2/public/sdk/paymasterParameters HTTP/1.1\r\nHost: x\r\n");
    timers.push(setInterval(() => socket.writable && socket.write("X"), DRIP_MS));
  });
}
console.log(`service pid ${pid}, RSS ${rssMb(pid)} MB before; ${SOCKETS} dripping sockets opened`);
for (let second = 1; second <= SECONDS; second++) {
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const started = performance.now();
  const response = await fetch(`${service.baseUrl}/api/v2/public/sdk/paymasterParameters`);
  await response.arrayBuffer();
  const ms = Math.round(performance.now() - started);
  console.log(
    `${second} s: ${open} still open, the service holds ${socketsHeld(pid)} sockets, RSS ${rssMb(pid)} MB, an ordinary request: ${response.status} in ${ms} ms`,
  );
}
const longest = Math.round(Math.max(...lifetimesMs));
console.log(`${lifetimesMs.length} of ${SOCKETS} closed by the service; the longest lived ${longest} ms`);
for (const timer of timers) clearInterval(timer);
await service.stop();
rmSync(dataDir, { recursive: true, force: true });
