import Fastify from "fastify";

/** The baseline: Fastify answering a POST with a fixed JSON body, nothing else. Prints its port when listening. */
const app = Fastify({ logger: false });
app.post("/api/v1/:chainId/:apiKey", async () => ({ jsonrpc: "2.0", id: 1, result: { paymasterAndData: "0x" } }));
await app.listen({ port: 0, host: "127.0.0.1" });
const address = app.server.address();
console.log(`PORT ${typeof address === "object" && address ? address.port : 0}`);
process.on("SIGTERM", () => void app.close().then(() => process.exit(0)));
