# The sapi-temporal image: the CLI, the worker and the emulator (one image, the command picks the role).
FROM node:20.18-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# `npm install`, not `npm ci`: the lock is written by npm 11, which leaves out the other platforms' optional
# binaries (@duckdb, @swc); `npm ci` refuses such a lock, `npm install` keeps the locked versions and adds the
# binary of the image's platform (linux/arm64 too).
RUN npm install --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npx tsc -p tsconfig.build.json && npm prune --omit=dev

FROM node:20.18-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/lib ./lib
COPY package.json ./
COPY bin ./bin
COPY scripts/ts-register.js ./scripts/ts-register.js
USER node
ENTRYPOINT ["bin/sapi-temporal"]
CMD ["worker"]
