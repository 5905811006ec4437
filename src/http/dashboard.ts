import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { extname, join } from "node:path";
import { gzipSync } from "node:zlib";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";

const DASHBOARD_PATH = "/dashboard";

/**
 * What every dashboard answer carries. The page runs only its own script and style files (no inline script, no
 * eval), talks to this origin only (the management API), loads nothing from elsewhere, may not be framed
 * (clickjacking), and sends no Referer: its URLs say which paymaster is open. Images from data: URLs are the SVG icons.
 */
const DASHBOARD_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; "),
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
  "cross-origin-opener-policy": "same-origin",
};

const CONTENT_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".map": "application/json",
};

interface StaticFile {
  body: Buffer;
  gzipped: Buffer;
  type: string;
  etag: string;
  /** Files named by their content's hash never change under their name; index.html is asked again each time. */
  immutable: boolean;
}

/** The built dashboard, read once: a few small files, served from memory (compressed once, not per request). */
function loadFiles(folder: string): Map<string, StaticFile> {
  const files = new Map<string, StaticFile>();
  for (const name of readdirSync(folder)) {
    const type = CONTENT_TYPES[extname(name)];
    if (!type) continue;
    let body: Buffer;
    try {
      body = readFileSync(join(folder, name));
    } catch {
      continue; // replaced by a build running meanwhile
    }
    const etag = `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"`;
    files.set(name, { body, gzipped: gzipSync(body), type, etag, immutable: name !== "index.html" });
  }
  return files;
}

function send(request: FastifyRequest, reply: FastifyReply, file: StaticFile) {
  reply.headers(DASHBOARD_HEADERS);
  reply.header("content-type", file.type);
  reply.header("etag", file.etag);
  reply.header("vary", "accept-encoding");
  reply.header("cache-control", file.immutable ? "public, max-age=31536000, immutable" : "no-cache");
  if (request.headers["if-none-match"] === file.etag) return reply.status(304).send();
  if (/\bgzip\b/.test(String(request.headers["accept-encoding"] ?? ""))) {
    reply.header("content-encoding", "gzip");
    return reply.send(file.gzipped);
  }
  return reply.send(file.body);
}

/**
 * The web dashboard at /dashboard/: static files built from dashboard/ (scripts/buildDashboard.ts), a client of the
 * documented management API like any other. `folder` undefined (DASHBOARD=off): no route at all. A folder that was
 * never built gets a 503 that says how to build it, rather than a service that refuses to start.
 */
export function dashboardRoutes(app: FastifyInstance, folder: string | undefined): void {
  if (!folder) return;
  const built = existsSync(join(folder, "index.html"));
  const files = built ? loadFiles(folder) : new Map<string, StaticFile>();
  if (!built) app.log.warn(`The dashboard is not built (${folder}): run npm run build:dashboard`);
  const hide = { schema: { hide: true } };

  app.get(DASHBOARD_PATH, hide, async (_request, reply) => {
    reply.headers(DASHBOARD_HEADERS);
    return reply.redirect(`${DASHBOARD_PATH}/`, 302);
  });
  app.get<{ Params: { "*": string } }>(`${DASHBOARD_PATH}/*`, hide, async (request, reply) => {
    const name = request.params["*"] || "index.html";
    const file = files.get(name);
    if (file) return send(request, reply, file);
    reply.headers(DASHBOARD_HEADERS);
    if (!built) {
      return reply
        .status(503)
        .send({ statusCode: 503, message: "The dashboard is not built: run npm run build:dashboard" });
    }
    return reply.status(404).send({ statusCode: 404, message: `No dashboard file ${DASHBOARD_PATH}/${name}` });
  });
}
