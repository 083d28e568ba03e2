# The sapi-temporal image: the CLI, the worker and the emulator (one image, the command picks the role).
FROM node:20.18-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
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
