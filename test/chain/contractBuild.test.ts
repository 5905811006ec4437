import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { compileContracts } from "../../scripts/build-contracts";

test("the committed artifacts are what contracts/*.sol compile to (else run npm run build:contracts)", () => {
  const { contracts, errors } = compileContracts();
  assert.deepEqual(
    errors.filter((problem) => problem.severity === "error").map((problem) => problem.formattedMessage),
    [],
  );
  assert.ok(contracts.length > 0);
  for (const built of contracts) {
    const committed = JSON.parse(
      readFileSync(new URL(`../../contracts/artifacts/${built.contractName}.json`, import.meta.url), "utf8"),
    );
    // The bytecode decides the paymaster's CREATE2 address, so a stale artifact would deploy somewhere unexpected.
    assert.deepEqual(committed, built, built.contractName);
  }
});
