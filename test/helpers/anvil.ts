// One local anvil chain per test file, on a port the OS picks, so test files can run in parallel. The launcher is the
// service's own (src/devChain/anvil.ts), so the tests start anvil exactly as the embedded local chain does.
//
//   const anvil = await startAnvil();
//   after(() => anvil.stop());
export { type Anvil, type AnvilOptions, AnvilStartError, startAnvil } from "../../src/devChain/anvil";
