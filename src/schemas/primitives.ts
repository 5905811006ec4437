import Type from "typebox";

/**
 * The JSON shapes every boundary shares, written once: the management API, the JSON-RPC methods, the chains file and
 * the documents generated from them (OpenAPI, OpenRPC) all take these. Patterns are plain JSON Schema so that Fastify's
 * compiler, TypeBox's and any client's validator read them the same way.
 */

/** A 20-byte address as 0x and 40 hex digits, either case (addresses are compared in lowercase after parsing). */
export const Address = Type.String({
  pattern: "^0x[0-9a-fA-F]{40}$",
  description: "20-byte address: 0x followed by 40 hex digits",
  examples: ["0x5FF137D4b0FDCD49DcA30c7CF57E578a026d2789"],
});

/** Any byte string: 0x and an even number of hex digits. */
export const HexBytes = Type.String({
  pattern: "^0x([0-9a-fA-F]{2})*$",
  description: "bytes: 0x followed by an even number of hex digits",
  examples: ["0x"],
});

/** A JSON-RPC quantity (uint256): 0x and hex digits, the way nodes and bundlers write numbers. */
export const HexQuantity = Type.String({
  pattern: "^0x[0-9a-fA-F]{1,64}$",
  description: "unsigned integer as 0x-prefixed hex (at most 256 bits)",
  examples: ["0x5208"],
});

/** A 32-byte word, e.g. a hash. */
export const Bytes32 = Type.String({
  pattern: "^0x[0-9a-fA-F]{64}$",
  description: "32 bytes: 0x followed by 64 hex digits",
});

/** Record ids are UUIDs. */
export const Uuid = Type.String({
  pattern: "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$",
  description: "UUID",
});
