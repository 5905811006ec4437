import type { TSchema } from "typebox";

/** One params position of a JSON-RPC method: its name in the documents and its schema. */
export interface ParamDescriptor {
  name: string;
  description: string;
  required: boolean;
  schema: TSchema;
}

/**
 * What the OpenRPC document (src/rpc/openrpc.ts) says about a method: params by position, result, and the error codes
 * it may answer with beyond the envelope's own. The method's handler reads its params with the same schemas.
 */
export interface MethodDescriptor {
  name: string;
  summary: string;
  description: string;
  params: ParamDescriptor[];
  result: { name: string; description: string; schema: TSchema };
  /** Codes of src/errors.ts and the estimation's -32002 this method answers with. */
  errors: readonly number[];
}
