# syntax=docker/dockerfile:1
# The paymaster service for production: built from source, run from what `npm pack` carries (the `files` of
# package.json), with production dependencies only. test/service/production.test.ts takes the same path without a
# container engine: pack, install with --omit=dev --omit=optional in an empty folder, `node dist/main.js`.

# --- build: every dependency, then the pack ---------------------------------------------------------------------------
FROM node:26-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm install --no-audit --no-fund --no-save
COPY . .
# prepack runs `npm run build`; the tarball holds exactly what the runtime stage needs.
RUN npm pack --pack-destination /tmp \
    && mkdir /app \
    && tar -xzf /tmp/paymaster-service-*.tgz -C /app --strip-components=1 \
    && cp package-lock.json /app/

# --- runtime: the pack and its production dependencies, as a user without privileges ----------------------------------
FROM node:26-bookworm-slim AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/var/lib/paymaster
WORKDIR /app
COPY --from=build /app ./
# --omit=optional too: typescript and zod are development packages that viem and abitype name as optional peers, which
# --omit=dev alone keeps (docs/operations.md, 'Build and install').
RUN npm install --omit=dev --omit=optional --no-audit --no-fund \
    && npm cache clean --force \
    && mkdir -p /var/lib/paymaster \
    && chown node:node /var/lib/paymaster
USER node
EXPOSE 3000
# Liveness only (no dependency is checked): an orchestrator's readiness probe should call /readyz instead.
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
    CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# SIGTERM reaches node directly (exec form): in-flight requests are answered, then it exits within SHUTDOWN_TIMEOUT_MS.
STOPSIGNAL SIGTERM
CMD ["node", "--enable-source-maps", "dist/main.js"]
