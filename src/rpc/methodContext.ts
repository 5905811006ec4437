import type { ActionContext } from "../actions/context";

export type { DecisionNote } from "../actions/context";

/** What an RPC method gets: the context its use case runs in (src/actions/context.ts). */
export type MethodContext = ActionContext;

export type RpcMethod = (params: unknown[], ctx: MethodContext) => Promise<unknown>;
