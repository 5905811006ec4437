// The sponsor icon ERC-7677 lets a paymaster give wallets: an RFC 2397 data URI, so that a wallet shows it without
// fetching anything from us. Checked here for what JSON Schema cannot see: the media type, that the data decodes,
// that it is the image the type says, and that an SVG carries no script (wallets and our dashboard draw it in an
// <img>, where scripts do not run, but a wallet might inline it).
import { badRequest } from "../errors";
import { MAX_SPONSOR_ICON_LENGTH } from "../schemas/management/sponsorIconLimit";

const ACCEPTED = ["image/png", "image/webp", "image/svg+xml"] as const;
type IconType = (typeof ACCEPTED)[number];

/** `data:<type>[;parameters][;base64],<data>`, the RFC 2397 form (its `;charset=` and other parameters allowed). */
const DATA_URI = /^data:([a-z0-9.+-]+\/[a-z0-9.+-]+)((?:;[a-z0-9-]+=[^;,]*)*)(;base64)?,(.*)$/is;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The icon as given, once it is a data URI of a PNG, WebP or SVG image within the bound; else a 400 naming `field`. */
export function sponsorIcon(value: string, field: string): string {
  const accepted = "a PNG, WebP or SVG image as an RFC 2397 data URI (data:image/png;base64,…)";
  if (value.length > MAX_SPONSOR_ICON_LENGTH) {
    throw badRequest(`${field} is ${value.length} characters long; at most ${MAX_SPONSOR_ICON_LENGTH} are accepted`);
  }
  const match = DATA_URI.exec(value);
  if (!match) throw badRequest(`${field} must be ${accepted}`);
  const type = (match[1] as string).toLowerCase();
  if (!(ACCEPTED as readonly string[]).includes(type)) {
    throw badRequest(`${field} has media type ${type}; only image/png, image/webp and image/svg+xml are accepted`);
  }
  const bytes = decode(match[4] as string, match[3] !== undefined, field);
  if (bytes.length === 0) throw badRequest(`${field} has no image data after the comma`);
  checkContent(type as IconType, bytes, field);
  return value;
}

function decode(data: string, base64: boolean, field: string): Buffer {
  if (base64) {
    if (!BASE64.test(data) || data.length % 4 === 1) throw badRequest(`${field}: the base64 data is not valid base64`);
    return Buffer.from(data, "base64");
  }
  try {
    return Buffer.from(decodeURIComponent(data), "utf8");
  } catch {
    throw badRequest(`${field}: the data is not valid percent-encoded text`);
  }
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function checkContent(type: IconType, bytes: Buffer, field: string): void {
  if (type === "image/png" && !bytes.subarray(0, 8).equals(PNG_SIGNATURE)) {
    throw badRequest(`${field} says image/png but its data is not a PNG image`);
  }
  if (
    type === "image/webp" &&
    !(bytes.subarray(0, 4).toString("latin1") === "RIFF" && bytes.subarray(8, 12).toString("latin1") === "WEBP")
  ) {
    throw badRequest(`${field} says image/webp but its data is not a WebP image`);
  }
  if (type === "image/svg+xml") {
    const text = bytes.toString("utf8");
    if (!/<svg[\s>]/i.test(text)) throw badRequest(`${field} says image/svg+xml but its data has no <svg> element`);
    if (/<script[\s>]|\son[a-z]+\s*=|javascript:|<foreignObject[\s>]/i.test(text)) {
      throw badRequest(
        `${field}: an SVG icon may not carry scripts, event handlers, javascript: links or foreignObject`,
      );
    }
  }
}
