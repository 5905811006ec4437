// One local anvil chain per test file, on a port the OS picks, so test files can run in parallel. The launcher is the
// service's own (src/devChain/anvil.ts), so the tests start anvil exactly as the embedded local chain does.
//
//   const anvil = await startAnvil();
//   after(() => anvil.stop());
import { type Anvil, type AnvilOptions, startAnvil as startServiceAnvil } from "../../src/devChain/anvil";

export { type Anvil, type AnvilOptions, AnvilStartError } from "../../src/devChain/anvil";

/**
 * A bound against an anvil that hangs, not a speed target, as the local chain's own start has (90 s): anvil reports its
 * port within a second on a quiet machine, but CI runs the PGlite pass, the PostgreSQL selection and the typecheck
 * side by side on two cores, where the launcher's 10 s has run out before. A test that times the start passes its own.
 */
const TEST_START_TIMEOUT_MS = 90_000;

export function startAnvil(options: AnvilOptions = {}): Promise<Anvil> {
  return startServiceAnvil({ startTimeoutMs: TEST_START_TIMEOUT_MS, ...options });
}
