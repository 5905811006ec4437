// What each EntryPoint version tells the rules of its operations (OperationReading): what deploys an account in each version, the worst-case cost
// and the deposit charge of each version's gas fields, and the JSON a WEBHOOK rule receives.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Address, Hex } from "viem";
import type { NamedDeployment } from "../../src/bindings/entryPoints/operationReading";
import { maxChargeWei, worstCaseCostWei, worstCaseCostWeiV07 } from "../../src/bindings/entryPoints/prefund";
import type { Eip7702Authorization } from "../../src/bindings/entryPoints/userOperationV07";
import { ENTRY_POINT_VERSIONS } from "../../src/bindings/entryPoints/versions";
import type { PartialUserOperation } from "../../src/sponsorship/partialUserOperation";
import type { PartialUserOperationV07 } from "../../src/sponsorship/partialUserOperationV07";
import { versionOf } from "../helpers/versionOf";

const SENDER = "0x4df23b78543f5c2f9cbcdf09956288b3e97bb9a4" as Address;
const FACTORY = "0x9406cc6185a346906296840746125a0e44976454" as Address;
const FACTORY_DATA = "0x5fbfb9cf0000000000000000000000000000000000000000000000000000000000000001" as Hex;
const MARKER = "0x7702000000000000000000000000000000000000" as Address;
const CALL = "0xb61d27f6" as Hex;
const AUTH: Eip7702Authorization = {
  chainId: 31337n,
  address: "0xe6Cae83BdE06E4c305530e199D7217f42808555B",
  nonce: 4n,
  yParity: 1,
  r: "0x1111111111111111111111111111111111111111111111111111111111111111",
  s: "0x2222222222222222222222222222222222222222222222222222222222222222",
};

const v06 = (initCode: Hex): PartialUserOperation => ({ sender: SENDER, nonce: 3n, initCode, callData: CALL });
const v07 = (fields: Partial<PartialUserOperationV07> = {}): PartialUserOperationV07 => ({
  entryPointVersion: "0.7",
  sender: SENDER,
  nonce: 3n,
  callData: CALL,
  ...fields,
});
const v08 = (fields: Partial<PartialUserOperationV07> = {}) => v07({ entryPointVersion: "0.8", ...fields });

describe("view: sender, nonce and callData of every version, and what deploys the account", () => {
  const cases: {
    name: string;
    op: PartialUserOperation | PartialUserOperationV07;
    deployment: NamedDeployment | undefined;
  }[] = [
    { name: "v0.6, empty initCode", op: v06("0x"), deployment: undefined },
    {
      name: "v0.6, initCode",
      op: v06(`${FACTORY}${FACTORY_DATA.slice(2)}`),
      deployment: { kind: "factory", what: "initCode" },
    },
    { name: "v0.7, no factory", op: v07(), deployment: undefined },
    {
      name: "v0.7, a factory and its data",
      op: v07({ factory: FACTORY, factoryData: FACTORY_DATA }),
      deployment: { kind: "factory", what: "a factory" },
    },
    {
      name: "v0.7, a factory without data",
      op: v07({ factory: FACTORY }),
      deployment: { kind: "factory", what: "a factory" },
    },
    {
      name: "v0.7, the 0x7702 address is a factory like any other (the marker means something in v0.8 only)",
      op: v07({ factory: MARKER }),
      deployment: { kind: "factory", what: "a factory" },
    },
    { name: "v0.8, no factory, no authorization", op: v08(), deployment: undefined },
    {
      name: "v0.8, a factory",
      op: v08({ factory: FACTORY, factoryData: FACTORY_DATA }),
      deployment: { kind: "factory", what: "a factory" },
    },
    {
      name: "v0.8, an EIP-7702 authorization with the marker",
      op: v08({ factory: MARKER, eip7702Auth: AUTH }),
      deployment: { kind: "eip7702Authorization", what: "an EIP-7702 authorization", delegate: AUTH.address },
    },
    {
      name: "v0.8, an EIP-7702 authorization alone",
      op: v08({ eip7702Auth: AUTH }),
      deployment: { kind: "eip7702Authorization", what: "an EIP-7702 authorization", delegate: AUTH.address },
    },
    {
      name: "v0.8, the marker alone: the EOA already has its code",
      op: v08({ factory: MARKER }),
      deployment: undefined,
    },
    {
      name: "v0.8, the marker in its short form alone",
      op: v08({ factory: "0x7702" as Address, factoryData: "0x" }),
      deployment: undefined,
    },
    {
      name: "v0.8, the marker with factoryData: the account is initialised by this operation",
      op: v08({ factory: MARKER, factoryData: FACTORY_DATA }),
      deployment: {
        kind: "eip7702Initialisation",
        what: "an EIP-7702 initialisation (factoryData after the 0x7702 marker)",
      },
    },
    {
      name: "v0.9, an EIP-7702 authorization: what v0.8 names a deployment, later versions do too",
      op: v07({ entryPointVersion: "0.9", eip7702Auth: AUTH }),
      deployment: { kind: "eip7702Authorization", what: "an EIP-7702 authorization", delegate: AUTH.address },
    },
  ];
  for (const { name, op, deployment } of cases) {
    test(name, () => {
      assert.deepEqual(versionOf(op).view(op), {
        sender: SENDER,
        nonce: 3n,
        callData: CALL,
        deployment,
      });
    });
  }
});

describe("worstCaseCostWei and depositChargeWei of each version", () => {
  // Distinct powers of two: a term counted twice or left out changes the sum.
  const gas = {
    callGasLimit: 1n,
    verificationGasLimit: 2n,
    preVerificationGas: 4n,
    paymasterVerificationGasLimit: 8n,
    paymasterPostOpGasLimit: 16n,
    maxFeePerGas: 1_000n,
    maxPriorityFeePerGas: 7n,
  };

  test("v0.6: (callGasLimit + 3 × verificationGasLimit + preVerificationGas) × maxFeePerGas", () => {
    const { paymasterVerificationGasLimit, paymasterPostOpGasLimit, ...v06Gas } = gas;
    const op = { ...v06("0x"), ...v06Gas };
    assert.equal(versionOf(op).worstCaseCostWei(op), (1n + 6n + 4n) * 1_000n);
    assert.equal(versionOf(op).worstCaseCostWei(op), worstCaseCostWei(op));
    assert.equal(versionOf(op).depositChargeWei(op), maxChargeWei(op));
  });

  for (const version of ["0.7", "0.8"] as const) {
    test(`v${version}: every limit once, the paymaster's included, × maxFeePerGas; the deposit charge is the same`, () => {
      const op = v07({ entryPointVersion: version, ...gas });
      assert.equal(versionOf(op).worstCaseCostWei(op), (1n + 2n + 4n + 8n + 16n) * 1_000n);
      assert.equal(versionOf(op).worstCaseCostWei(op), worstCaseCostWeiV07(gas));
      assert.equal(versionOf(op).depositChargeWei(op), versionOf(op).worstCaseCostWei(op));
    });
  }

  test("large values stay exact", () => {
    const max = 10_000_000_000n;
    const fee = (1n << 128n) - 1n;
    const op = v07({
      callGasLimit: max,
      verificationGasLimit: max,
      preVerificationGas: max,
      paymasterVerificationGasLimit: max,
      paymasterPostOpGasLimit: max,
      maxFeePerGas: fee,
    });
    assert.equal(versionOf(op).worstCaseCostWei(op), 5n * max * fee);
  });

  const missing: { name: string; op: PartialUserOperation | PartialUserOperationV07; field: string }[] = [
    {
      name: "v0.6 without maxFeePerGas",
      op: { ...v06("0x"), callGasLimit: 1n, verificationGasLimit: 1n, preVerificationGas: 1n },
      field: "maxFeePerGas",
    },
    {
      name: "v0.7 without the paymaster's postOp limit",
      op: v07({ ...gas, paymasterPostOpGasLimit: undefined }),
      field: "paymasterPostOpGasLimit",
    },
    { name: "v0.8 without callGasLimit", op: v08({ ...gas, callGasLimit: undefined }), field: "callGasLimit" },
  ];
  for (const { name, op, field } of missing) {
    test(`${name}: an error naming the field, not a wrong number`, () => {
      const expected = new RegExp(`needs ${field}, which it lacks`);
      assert.throws(() => versionOf(op).worstCaseCostWei(op), expected);
      assert.throws(() => versionOf(op).depositChargeWei(op), expected);
    });
  }
});

describe("webhookJson: what a WEBHOOK rule receives", () => {
  test("v0.6: the fields as before, numbers in decimal, absent gas left out", () => {
    assert.deepEqual(ENTRY_POINT_VERSIONS["0.6"].webhookJson({ ...v06("0x01"), callGasLimit: 5n, maxFeePerGas: 10n }), {
      sender: SENDER,
      nonce: "3",
      initCode: "0x01",
      callData: CALL,
      callGasLimit: "5",
      maxFeePerGas: "10",
    });
  });

  test("v0.7: its version, factory, factoryData and the paymaster's gas limits", () => {
    const op = v07({
      factory: FACTORY,
      factoryData: FACTORY_DATA,
      callGasLimit: 1n,
      verificationGasLimit: 2n,
      preVerificationGas: 3n,
      maxFeePerGas: 4n,
      maxPriorityFeePerGas: 5n,
      paymasterVerificationGasLimit: 6n,
      paymasterPostOpGasLimit: 7n,
    });
    assert.deepEqual(versionOf(op).webhookJson(op), {
      sender: SENDER,
      nonce: "3",
      entryPointVersion: "0.7",
      factory: FACTORY,
      factoryData: FACTORY_DATA,
      callData: CALL,
      callGasLimit: "1",
      verificationGasLimit: "2",
      preVerificationGas: "3",
      maxFeePerGas: "4",
      maxPriorityFeePerGas: "5",
      paymasterVerificationGasLimit: "6",
      paymasterPostOpGasLimit: "7",
    });
  });

  test("v0.8: the EIP-7702 authorization, numbers in decimal", () => {
    assert.deepEqual(ENTRY_POINT_VERSIONS["0.8"].webhookJson(v08({ factory: MARKER, eip7702Auth: AUTH })), {
      sender: SENDER,
      nonce: "3",
      entryPointVersion: "0.8",
      factory: MARKER,
      callData: CALL,
      eip7702Auth: { chainId: "31337", address: AUTH.address, nonce: "4", yParity: "1", r: AUTH.r, s: AUTH.s },
    });
  });
});
