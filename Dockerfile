# The standalone service: GraphQL at /query, the dashboard at /dashboard, health at /health/*.
# Build: docker build -t loyalty-leaderboard .
# Run:   docker run -p 3000:3000 -v loyalty-data:/data loyalty-leaderboard
#        (or -e DATABASE_URL=mysql://user:pass@host:3306/db, or postgres://user:pass@host:5432/db;
#        settings: docs/operations.md)
# CI rebuilds these stages from exactly the files they copy: scripts/check-image.js.
# Node 22, not 24: better-sqlite3 12 (the service's) can abort a Node 24 process when the GC
# finalizes a statement (WiseLibs/better-sqlite3#1515); 13 fixes it but needs Node 22 or later.

# Compiles the TypeScript (the whole install, dev tools included).
FROM node:22-bookworm AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/client/package.json packages/client/
COPY packages/service/package.json packages/service/
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json nest-cli.json schema.gql ./
COPY scripts/check-client.js scripts/generate-client-types.js scripts/
COPY packages/client packages/client
COPY src src
RUN npm run build

# What the service runs with and nothing else: packages/service/package.json, from the lockfile.
# (--omit=optional: the Express adapter, an optional peer of @nestjs/core that only the tests use.)
# better-sqlite3 compiles here (python3, make and g++ come with this image).
FROM node:22-bookworm AS runtime-deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/client/package.json packages/client/
COPY packages/service/package.json packages/service/
RUN npm ci --omit=dev --omit=optional --no-audit --no-fund --workspace loyalty-leaderboard-service \
 && rm node_modules/loyalty-leaderboard-service \
 && mkdir data

FROM node:22-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production \
    PORT=3000 \
    HOST=0.0.0.0 \
    DATABASE_URL=sqlite:/data/loyalty.sqlite
COPY --from=runtime-deps /app/node_modules node_modules
COPY --from=build /app/dist/src dist/src
COPY package.json schema.gql ./
# The SQLite volume, writable by the user the service runs as (root runs nothing here).
COPY --from=runtime-deps --chown=node:node /app/data /data
USER node
VOLUME ["/data"]
EXPOSE 3000
# The slim image has no curl: node asks the readiness endpoint (200 when the database answers).
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/health/ready').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "dist/src/host/main.js"]
