# The sapi-temporal worker image: the compiled package (lib/, bin/) and its runtime dependencies, run as `node`.
# One image, the command picks the role: `worker` (default) or, in the compose file's dev profile, `emulator`.
#   docker build -t sapi-temporal:0.1.0 .

# ---- build: compile the TypeScript sources --------------------------------------------------------------------------
FROM node:20.19.5-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# `npm install`, not `npm ci`: the lock is written by npm 11, which leaves out the other platforms' optional binaries
# (@duckdb, @swc); `npm ci` refuses such a lock, `npm install` keeps the locked versions and adds the binary of the
# image's platform (linux/arm64 too). No install script is needed to compile.
RUN npm install --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npx tsc -p tsconfig.build.json

# ---- runtime: production dependencies only, no compiler, no sources ------------------------------------------------
FROM node:20.19.5-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
# No runtime dependency needs its install script: native code (Temporal core bridge, DuckDB, swc) ships as prebuilt
# per-platform packages; the scripts skipped are protobufjs's version notice and @swc/core's binary check.
# The Temporal core bridge package carries its library for five platforms (~150 MB): keep the image's own.
RUN npm install --omit=dev --ignore-scripts --no-audit --no-fund \
 && npm cache clean --force \
 && find node_modules/@temporalio/core-bridge/releases -mindepth 1 -maxdepth 1 ! -name "$(uname -m)-unknown-linux-gnu" -exec rm -rf {} + \
 && test -f "node_modules/@temporalio/core-bridge/releases/$(uname -m)-unknown-linux-gnu/index.node"
COPY --from=build /app/lib ./lib
COPY bin ./bin
COPY deploy/worker-healthcheck.js ./deploy/worker-healthcheck.js
# The emulator's data folder (dev profile). A new named volume mounted here takes this folder's owner, so the
# non-root user can write it; the worker itself writes only under /tmp (SAPI_WORK_DIR).
RUN mkdir -p /var/lib/sapi-emulator && chown node:node /var/lib/sapi-emulator
USER node
# Healthy when this container's worker polls its task queue (see deploy/worker-healthcheck.js). The emulator
# service overrides it with an HTTP check.
HEALTHCHECK --interval=30s --timeout=10s --start-period=60s --retries=3 CMD ["node", "/app/deploy/worker-healthcheck.js"]
# bin/sapi-temporal is a POSIX sh wrapper (it `exec`s node on bin/sapi-temporal.js), so it is the entrypoint itself,
# not an argument of `node`; node ends up as the container's main process and gets SIGTERM for a graceful stop.
ENTRYPOINT ["/app/bin/sapi-temporal"]
CMD ["worker"]
