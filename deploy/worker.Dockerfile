# The lean sapi-temporal worker image: the published plugin package (packages/sapi-temporal, packed from this
# checkout) and its Temporal SDK peers, nothing of the workspace (no emulator, DuckDB or fastify), run as `node`.
#   docker build -f deploy/worker.Dockerfile -t sapi-temporal-worker:0.1.0 .
# The same steps run natively in test/integration/package/consumer.test.ts (pack, install into a fresh project, run
# the worker against a Temporal server).

# ---- pack: `npm pack` of the plugin package (its prepack compiles what the plugin reaches in src/) -----------------
FROM node:20.19.5-bookworm-slim AS pack
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/sapi-temporal/package.json ./packages/sapi-temporal/
# `npm install`, not `npm ci`: the lock is written by npm 11 without the other platforms' optional binaries, which
# `npm ci` refuses. No install script is needed to compile.
RUN npm install --no-audit --no-fund --ignore-scripts
COPY tsconfig.json ./
COPY src ./src
COPY packages/sapi-temporal ./packages/sapi-temporal
RUN npm pack -w sapi-temporal --pack-destination /pack

# ---- runtime: the package and its peers installed as a user's project would ---------------------------------------
FROM node:20.19.5-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY --from=pack /pack /pack
# The peers at the version the package was built and tested with (the optional ones too, so the image serves Azure
# stacks and can trace with SAPI_OTEL_ENDPOINT); the core bridge keeps only this platform's library.
RUN echo '{"name":"sapi-temporal-worker","private":true}' > package.json \
 && npm install --omit=dev --ignore-scripts --no-audit --no-fund /pack/sapi-temporal-*.tgz \
      @temporalio/activity@1.24.0 @temporalio/client@1.24.0 @temporalio/common@1.24.0 @temporalio/envconfig@1.24.0 @temporalio/nexus@1.24.0 \
      @temporalio/plugin@1.24.0 @temporalio/proto@1.24.0 @temporalio/worker@1.24.0 @temporalio/workflow@1.24.0 \
      @temporalio/interceptors-opentelemetry@1.24.0 @opentelemetry/api@1.9.0 @opentelemetry/context-async-hooks@1.30.1 \
      @opentelemetry/core@1.30.1 @opentelemetry/exporter-trace-otlp-http@0.57.2 @opentelemetry/resources@1.30.1 \
      @opentelemetry/sdk-trace-base@1.30.1 @azure/storage-blob@12.29.1 \
 && rm -rf /pack \
 && npm cache clean --force \
 && find node_modules/@temporalio/core-bridge/releases -mindepth 1 -maxdepth 1 ! -name "$(uname -m)-unknown-linux-gnu" -exec rm -rf {} + \
 && test -f "node_modules/@temporalio/core-bridge/releases/$(uname -m)-unknown-linux-gnu/index.node" \
 && test ! -e node_modules/@duckdb && test ! -e node_modules/fastify
COPY deploy/worker-healthcheck.js ./deploy/worker-healthcheck.js
USER node
# Healthy when this container's worker polls its task queue (see deploy/worker-healthcheck.js).
HEALTHCHECK --interval=30s --timeout=10s --start-period=60s --retries=3 CMD ["node", "/app/deploy/worker-healthcheck.js"]
# The package's bin is a POSIX sh wrapper that `exec`s node, so node is the main process and gets SIGTERM.
ENTRYPOINT ["/app/node_modules/.bin/sapi-temporal"]
CMD ["worker"]
