# The standalone service. Build: docker build -t loyalty-leaderboard .
# Run:   docker run -p 3000:3000 -v loyalty-data:/data loyalty-leaderboard
#        (or -e DATABASE_URL=mysql://user:pass@host:3306/db)
FROM node:20-bookworm AS build
WORKDIR /app
COPY package.json package-lock.json ./
# better-sqlite3 compiles here (python3, make and g++ come with this image).
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json nest-cli.json ormconfig.ts schema.gql ./
COPY src ./src
RUN npm run build

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production \
    PORT=3000 \
    HOST=0.0.0.0 \
    DATABASE_URL=sqlite:/data/loyalty.sqlite
# The framework packages are peer dependencies of the importable module and pinned as
# devDependencies, so the runtime image keeps the full install from the build stage.
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json schema.gql ./
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 3000
CMD ["node", "dist/src/host/main.js"]
