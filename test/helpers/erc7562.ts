// An ERC-7562 check of a paymaster's validation, for our own contracts before they ship: the bundle is traced on anvil
// (debug_traceCall with the opcode logger, memory on), the EntryPoint's call of validatePaymasterUserOp is found in it,
// and every step inside that call (and the calls it makes) is held to the rules a bundler applies to a paymaster:
//
// - banned opcodes (OP-011): the block's and the transaction's values, BALANCE and SELFBALANCE (OP-080 lets a staked
//   entity use these two; none of ours needs to, so they are refused outright), CREATE and SELFDESTRUCT; CREATE2
//   (OP-031: only a factory creating the sender may); GAS unless a call follows it at once (OP-012);
// - calls (OP-041, OP-054, OP-061, OP-062): none to an address without code, none to the EntryPoint, none with value,
//   no precompile beyond the EVM's own and P-256 (RIP-7212);
// - storage (STO-010, STO-021, STO-031..033): the sender's own; slots associated with the sender in another contract
//   (a staked paymaster may touch them in a first operation too, whose sender is only just deployed); the paymaster's
//   own and slots associated with it, if it is staked; and other slots, read only, if it is staked. A slot is
//   associated with an address A when it is A itself, or lies within 128 of keccak256 of an input that starts with A
//   (a mapping keyed by A, or a struct in one), the inputs being those hashed during the validation;
// - no step ending in an error such as running out of gas (OP-020).
//
//   const { logs } = await traceCall(rpcUrl, { from: bundler, to: entryPoint, data: handleOpsCallData });
//   const report = checkPaymasterValidation(logs, { entryPoint, sender, paymaster, paymasterStaked, deploysSender });
//   assert.deepEqual(report.violations, []);
import {
  type Address,
  getAddress,
  type Hex,
  hexToBigInt,
  isAddressEqual,
  keccak256,
  type SignedAuthorization,
  toFunctionSelector,
} from "viem";

/** One step of the opcode logger (geth's struct logs, as anvil answers them): the stack's top is its last item. */
export interface StructLog {
  pc: number;
  op: string;
  depth: number;
  gas: number;
  stack?: Hex[];
  /** 32-byte words. */
  memory?: Hex[];
  error?: string;
}

export interface TracedCall {
  from: Address;
  to: Address;
  data: Hex;
  gas?: bigint;
  /** EIP-7702 delegations the transaction carries. */
  authorizationList?: readonly SignedAuthorization[];
}

/**
 * The opcode trace of a call, not mined. Read with fetch rather than viem: a bundle's trace with memory is tens of
 * megabytes, past viem's response limit.
 */
export async function traceCall(rpcUrl: string, call: TracedCall): Promise<{ failed: boolean; logs: StructLog[] }> {
  const transaction = {
    from: call.from,
    to: call.to,
    data: call.data,
    gas: `0x${(call.gas ?? 16_000_000n).toString(16)}`,
    ...(call.authorizationList
      ? {
          authorizationList: call.authorizationList.map((authorization) => ({
            chainId: `0x${authorization.chainId.toString(16)}`,
            address: authorization.address,
            nonce: `0x${authorization.nonce.toString(16)}`,
            yParity: `0x${(authorization.yParity ?? 0).toString(16)}`,
            r: authorization.r,
            s: authorization.s,
          })),
        }
      : {}),
  };
  const response = await fetch(rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "debug_traceCall",
      params: [transaction, "latest", { enableMemory: true, disableStorage: true }],
    }),
  });
  const body = (await response.json()) as {
    result?: { failed: boolean; structLogs: StructLog[] };
    error?: { message: string };
  };
  if (!body.result) throw new Error(`debug_traceCall failed: ${body.error?.message ?? response.status}`);
  return { failed: body.result.failed, logs: body.result.structLogs };
}

/** Who is who in the operation, and what ERC-7562 grants the paymaster. */
export interface ValidationScope {
  entryPoint: Address;
  sender: Address;
  paymaster: Address;
  /** Staked in the EntryPoint with the bundlers' minimum: its own storage and the storage associated with it open. */
  paymasterStaked: boolean;
  /** The operation has initCode: the sender's associated storage elsewhere then needs a staked entity (STO-021). */
  deploysSender: boolean;
}

export interface Violation {
  rule: string;
  detail: string;
  /** Whose storage, for a storage rule. */
  address?: Address;
}

export interface StorageAccess {
  /** Whose storage: the contract the step's frame writes to (a DELEGATECALL's caller). */
  address: Address;
  slot: Hex;
  write: boolean;
  /** The rule that allows it, or undefined when none does (then a violation says why). */
  allowedBy?: string;
}

export interface ValidationReport {
  /** How many times the paymaster's validation was found (once per operation of the paymaster in the bundle). */
  validations: number;
  steps: number;
  opcodes: ReadonlySet<string>;
  storage: StorageAccess[];
  violations: Violation[];
}

/** The EntryPoints' selectors of validatePaymasterUserOp: v0.6's UserOperation, and v0.7's packed one (v0.7 to v0.9). */
const VALIDATE_SELECTORS = new Set<Hex>([
  toFunctionSelector(
    "validatePaymasterUserOp((address,uint256,bytes,bytes,uint256,uint256,uint256,uint256,uint256,bytes,bytes),bytes32,uint256)",
  ),
  toFunctionSelector(
    "validatePaymasterUserOp((address,uint256,bytes,bytes,bytes32,uint256,bytes32,bytes,bytes),bytes32,uint256)",
  ),
]);

/** OP-011 and OP-080 (both KECCAK256's and revm's names for an opcode given where they differ). */
const BANNED = new Set([
  "GASPRICE",
  "GASLIMIT",
  "DIFFICULTY",
  "PREVRANDAO",
  "TIMESTAMP",
  "BASEFEE",
  "BLOCKHASH",
  "NUMBER",
  "SELFBALANCE",
  "BALANCE",
  "ORIGIN",
  "CREATE",
  "COINBASE",
  "SELFDESTRUCT",
  "BLOBHASH",
  "BLOBBASEFEE",
  "INVALID",
]);
const CALLS = new Set(["CALL", "CALLCODE", "DELEGATECALL", "STATICCALL"]);
const STORAGE = new Set(["SLOAD", "SSTORE", "TLOAD", "TSTORE"]);
/** ecrecover to point evaluation (0x01-0x0a), and secp256r1 verification (RIP-7212, 0x100). */
const KNOWN_PRECOMPILES = new Set([...Array.from({ length: 10 }, (_, index) => BigInt(index + 1)), 0x100n]);
const EMPTY_CODE_HASH = keccak256("0x");
/** A slot within this many of a mapping entry's hash still belongs to it (a struct's fields). */
const ASSOCIATED_RANGE = 128n;

interface Frame {
  /** Whose code runs. */
  code?: Address;
  /** Whose storage SLOAD and SSTORE reach. */
  storage?: Address;
  /** Inside the paymaster's validation. */
  inScope: boolean;
}

/** The item `fromTop` places below the stack's top (0: the top). */
function stackItem(step: StructLog, fromTop: number): bigint {
  const stack = step.stack ?? [];
  const item = stack[stack.length - 1 - fromTop];
  if (item === undefined) throw new Error(`no stack item ${fromTop} at pc ${step.pc} (${step.op})`);
  return hexToBigInt(item);
}

function addressOf(value: bigint): Address {
  return getAddress(`0x${(value & ((1n << 160n) - 1n)).toString(16).padStart(40, "0")}`);
}

/** `length` bytes of the step's memory from `offset`, as hex without 0x (zeros past its end, as the EVM reads). */
function memorySlice(step: StructLog, offset: bigint, length: bigint): string {
  const all = (step.memory ?? []).map((word) => word.replace(/^0x/, "")).join("");
  const start = Number(offset) * 2;
  const end = start + Number(length) * 2;
  return all.slice(start, end).padEnd(end - start, "0");
}

function callInput(step: StructLog): string {
  const argsFrom = step.op === "CALL" || step.op === "CALLCODE" ? 3 : 2;
  return memorySlice(step, stackItem(step, argsFrom), stackItem(step, argsFrom + 1));
}

function where(frame: Frame, step: StructLog): string {
  return `${frame.code ?? "a contract being created"} at pc ${step.pc}`;
}

/** Every step of the paymaster's validation in `logs`, held to the rules above. */
export function checkPaymasterValidation(logs: readonly StructLog[], scope: ValidationScope): ValidationReport {
  const violations: Violation[] = [];
  const accesses: StorageAccess[] = [];
  const preimages: string[] = [];
  const opcodes = new Set<string>();
  let validations = 0;
  let steps = 0;
  const first = logs[0];
  if (first === undefined) throw new Error("an empty trace");
  // The bundle's transaction calls the EntryPoint (handleOps, or a simulation of it).
  const frames: Frame[] = [];
  frames[first.depth - 1] = { code: scope.entryPoint, storage: scope.entryPoint, inScope: false };

  for (const [index, step] of logs.entries()) {
    const next = logs[index + 1];
    const frame = frames[step.depth - 1] ?? { inScope: false };
    if (frame.inScope) {
      steps += 1;
      opcodes.add(step.op);
      checkStep(step, next, frame, scope, violations, accesses, preimages);
    }
    if (next !== undefined && next.depth === step.depth + 1) {
      const child = enter(step, frame, scope);
      if (child.inScope && !frame.inScope) validations += 1;
      frames[step.depth] = child;
    }
  }
  const storage = accesses.map((access) => judge(access, scope, preimages, violations));
  return { validations, steps, opcodes, storage, violations };
}

/** The frame a call or creation at `step` opens; the paymaster's validation opens the scope. */
function enter(step: StructLog, frame: Frame, scope: ValidationScope): Frame {
  if (!CALLS.has(step.op)) return { inScope: frame.inScope }; // CREATE or CREATE2: its address comes later
  const target = addressOf(stackItem(step, 1));
  const storage = step.op === "DELEGATECALL" || step.op === "CALLCODE" ? frame.storage : target;
  const opensValidation =
    !frame.inScope &&
    step.op === "CALL" &&
    frame.storage !== undefined &&
    isAddressEqual(frame.storage, scope.entryPoint) &&
    isAddressEqual(target, scope.paymaster) &&
    VALIDATE_SELECTORS.has(`0x${callInput(step).slice(0, 8)}`);
  return { code: target, storage, inScope: frame.inScope || opensValidation };
}

function checkStep(
  step: StructLog,
  next: StructLog | undefined,
  frame: Frame,
  scope: ValidationScope,
  violations: Violation[],
  accesses: StorageAccess[],
  preimages: string[],
): void {
  const at = where(frame, step);
  if (step.error) violations.push({ rule: "OP-020", detail: `${step.op} ended in "${step.error}" in ${at}` });
  if (BANNED.has(step.op)) violations.push({ rule: "OP-011", detail: `${step.op} in ${at}` });
  if (step.op === "CREATE2") violations.push({ rule: "OP-031", detail: `CREATE2 in ${at}` });
  if (step.op === "GAS" && !(next && next.depth === step.depth && CALLS.has(next.op))) {
    violations.push({ rule: "OP-012", detail: `GAS not followed by a call, ${next?.op ?? "end"} instead, in ${at}` });
  }
  if (STORAGE.has(step.op)) {
    if (frame.storage === undefined) throw new Error(`storage access with no known address in ${at}`);
    const slot = `0x${stackItem(step, 0).toString(16).padStart(64, "0")}` as Hex;
    accesses.push({ address: frame.storage, slot, write: step.op === "SSTORE" || step.op === "TSTORE" });
  }
  if (step.op === "KECCAK256" || step.op === "SHA3")
    preimages.push(memorySlice(step, stackItem(step, 0), stackItem(step, 1)));
  if (CALLS.has(step.op)) checkCall(step, next, scope, at, violations);
  if (step.op === "EXTCODESIZE" || step.op === "EXTCODEHASH") {
    const target = addressOf(stackItem(step, 0));
    const answer = next ? stackItem(next, 0) : 0n;
    const empty = step.op === "EXTCODESIZE" ? answer === 0n : answer === 0n || answer === hexToBigInt(EMPTY_CODE_HASH);
    if (empty && !isAddressEqual(target, scope.sender)) {
      violations.push({ rule: "OP-041", detail: `${step.op} of ${target}, which has no code, in ${at}` });
    }
  }
}

function checkCall(
  step: StructLog,
  next: StructLog | undefined,
  scope: ValidationScope,
  at: string,
  violations: Violation[],
): void {
  const target = addressOf(stackItem(step, 1));
  const value = step.op === "CALL" || step.op === "CALLCODE" ? stackItem(step, 2) : 0n;
  if (isAddressEqual(target, scope.entryPoint)) {
    violations.push({ rule: "OP-054", detail: `${step.op} to the EntryPoint in ${at}` });
  } else if (value > 0n) {
    violations.push({ rule: "OP-061", detail: `${step.op} with value ${value} to ${target} in ${at}` });
  }
  const number = hexToBigInt(target);
  if (number <= 0xffffn) {
    if (!KNOWN_PRECOMPILES.has(number)) violations.push({ rule: "OP-062", detail: `precompile ${target} in ${at}` });
    return;
  }
  // A call that opened no frame found no code (or failed before it ran), unless it called the sender (OP-042).
  const entered = next !== undefined && next.depth === step.depth + 1;
  if (!entered && !isAddressEqual(target, scope.sender)) {
    violations.push({ rule: "OP-041", detail: `${step.op} to ${target}, which has no code, in ${at}` });
  }
}

/** Whether `slot` is `address` or within ASSOCIATED_RANGE of the hash of an input that starts with it. */
function associated(slot: Hex, address: Address, preimages: readonly string[]): boolean {
  const value = hexToBigInt(slot);
  if (value === hexToBigInt(address)) return true;
  const word = address.slice(2).toLowerCase().padStart(64, "0");
  return preimages.some((input) => {
    if (!input.startsWith(word)) return false;
    const base = hexToBigInt(keccak256(`0x${input}`));
    return value >= base && value - base <= ASSOCIATED_RANGE;
  });
}

function judge(
  access: StorageAccess,
  scope: ValidationScope,
  preimages: readonly string[],
  violations: Violation[],
): StorageAccess {
  const allowedBy = allowingRule(access, scope, preimages);
  if (allowedBy === undefined) {
    const how = access.write ? "writes" : "reads";
    violations.push({
      rule: "STO",
      address: access.address,
      detail: `${how} slot ${access.slot} of ${access.address}, associated with neither the sender nor ${
        scope.paymasterStaked ? "the paymaster" : "a staked paymaster"
      }${access.write ? "" : scope.paymasterStaked ? "" : " (an unstaked paymaster reads no other storage)"}`,
    });
  }
  return { ...access, ...(allowedBy ? { allowedBy } : {}) };
}

function allowingRule(access: StorageAccess, scope: ValidationScope, preimages: readonly string[]): string | undefined {
  const staked = scope.paymasterStaked;
  if (isAddressEqual(access.address, scope.sender)) return "STO-010 the sender's own storage";
  if (isAddressEqual(access.address, scope.entryPoint)) return undefined;
  if (isAddressEqual(access.address, scope.paymaster)) return staked ? "STO-031 the staked paymaster's own" : undefined;
  if (associated(access.slot, scope.sender, preimages)) {
    if (!scope.deploysSender) return "STO-021 associated with the sender";
    return staked ? "STO-021 associated with the sender being deployed, by a staked paymaster" : undefined;
  }
  if (associated(access.slot, scope.paymaster, preimages)) {
    return staked ? "STO-032 associated with the staked paymaster" : undefined;
  }
  if (!access.write && staked) return "STO-033 read by a staked paymaster";
  return undefined;
}
