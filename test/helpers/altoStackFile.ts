// The one Alto stack an e2e file runs its tests on: started before them with the dApp they sponsor for, stopped after
// them. Each accessor fails the test that calls it with one clear message when the start itself failed, instead of a
// TypeError on an undefined stack. Every file that sends operations through Alto had these lines of its own.
//
//   const { started, dapp, endpoint } = altoStackFile({ entryPoints: ["0.7"], deposits }, chainDapp);
//   const bundler = bundlerFor(started(), endpoint(), account);
import assert from "node:assert/strict";
import { after, before } from "node:test";
import { type AltoStack, type AltoStackOptions, startAltoStack } from "./altoStack";
import type { Dapp, TestApp } from "./app";

export interface AltoStackFile {
  started(): AltoStack;
  /** The dApp `dappOf` made on the stack's service. */
  dapp(): Dapp;
  /** That dApp's sponsorship endpoint. */
  endpoint(): string;
}

export function altoStackFile(options: AltoStackOptions, dappOf?: (t: TestApp) => Promise<Dapp>): AltoStackFile {
  let stack: AltoStack | undefined;
  let dapp: Dapp | undefined;
  before(async () => {
    stack = await startAltoStack(options);
    dapp = await dappOf?.(stack.t);
  });
  after(() => stack?.stop());
  const started = () => {
    assert.ok(stack, "the chain, Alto or the service did not start");
    return stack;
  };
  const made = () => {
    assert.ok(dapp, "the file's dApp was not made");
    return dapp;
  };
  return { started, dapp: made, endpoint: () => started().endpoint(made()) };
}
